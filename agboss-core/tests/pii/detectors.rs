//! The built-in detectors: what each finds, and what it leaves alone.

use super::*;

// ----------------------------------------------------------------------------------------
// Detectors: positives and negatives

#[test]
fn email_detector() {
    let d = EmailDetector;
    for email in [
        "jane.doe@example.com",
        "j+tag@sub.example.co.uk",
        "JOHN_SMITH99@Example.ORG",
        "a@b.io",
        "first-last%x@my-host.example.travel",
    ] {
        assert_finds(&d, &format!("write to {email}, thanks"), email);
        assert_finds(&d, &format!("<{email}>"), email);
    }
    assert_finds(&d, "mailto:jane@example.com.", "jane@example.com");
    // Addresses glued by their domains are one finding.
    assert_finds(&d, "a@b.com@c.org", "a@b.com@c.org");
    assert_finds(&d, "a@b.com.-x@c.org", "a@b.com.-x@c.org");
    for text in [
        "no mail here",
        "user@localhost",
        "@example.com",
        "jane@",
        "jane@example",
        "jane@.com",
        "a @ b.com",
        "price 3@4.50",
        "j***@example.com",
    ] {
        assert_none(&d, text);
    }
}

#[test]
fn phone_detector() {
    let d = PhoneDetector;
    for phone in [
        "+1 415 555 2671",
        "+14155552671",
        "+44 20 7946 0958",
        "+49 (0)30 1234567",
        "+33 6 12 34 56 78",
        "(415) 555-2671",
        "415-555-2671",
        "415.555.2671",
        "1-415-555-2671",
        "030 1234 5678",
        "06 12 34 56 78",
        "(020) 7946 0958",
        "0171/1234567",
    ] {
        assert_finds(&d, &format!("call {phone} now"), phone);
    }
    for text in [
        "Order total: 1234567 EUR",
        "in the year 2024",
        "order 4155552671",
        "id 0612345678",
        "amount 12,345,678.90",
        "on 03.04.2024 10 people came",
        "dated 05/01/2024",
        "version 1.2.3.4",
        "SSN 123-45-6789",
        "4155552671234 units",
        "tel415-555-2671",
        "415-555-26711",
        "+1 2",
        "ISBN 978-3-16-148410-0",
    ] {
        assert_none(&d, text);
    }
}

#[test]
fn card_detector() {
    let d = CardDetector;
    for card in [
        "4242 4242 4242 4242",
        "4242-4242-4242-4242",
        "4242424242424242",
        "5555555555554444",
        "378282246310005",
        "3782 822463 10005",
        "6011 1111 1111 1117",
        "4000056655665556",
    ] {
        assert_finds(&d, &format!("card: {card}."), card);
    }
    // Markdown emphasis is not glue.
    assert_finds(&d, "**4242 4242 4242 4242**", "4242 4242 4242 4242");
    assert_finds(&d, "*4242424242424242*.", "4242424242424242");
    // What a partial mask keeps does not combine with what follows.
    assert_none(&d, "**************4927 0000 00000");
    // A card followed by an expiry date still is one.
    assert_finds(&d, "4242 4242 4242 4242 12 27", "4242 4242 4242 4242");
    for text in [
        "4242 4242 4242 4241",             // Luhn-invalid
        "4242424242424241",                // Luhn-invalid
        "1234567812345670",                // Luhn-valid, no issuer starts with 1
        "42424242424242421234",            // inside a longer digit run
        "0.4242424242424242",              // a decimal
        "ref4242424242424242",             // glued to a word
        "424242424242",                    // 12 digits
        "4 2 4 2 4 2 4 2 4 2 4 2 4 2 4 2", // not card grouping
        "timestamp 1700000000000",
    ] {
        assert_none(&d, text);
    }
}

#[test]
fn iban_detector() {
    let d = IbanDetector;
    for iban in [
        "DE89370400440532013000",
        "DE89 3704 0044 0532 0130 00",
        "GB82 WEST 1234 5698 7654 32",
        "GB82WEST12345698765432",
        "FR1420041010050500013M02606",
        "NL91ABNA0417164300",
        "BE68539007547034",
        "NO9386011117947",
        "de89370400440532013000",
    ] {
        assert_finds(&d, &format!("IBAN: {iban}, bank"), iban);
    }
    // Two IBANs in one run of groups.
    let text = "DE89370400440532013000 NL91ABNA0417164300";
    assert_eq!(
        found(&d, text),
        ["DE89370400440532013000", "NL91ABNA0417164300"]
    );
    for text in [
        "DE89370400440532013001",  // bad checksum
        "DE8937040044053201300",   // too short for DE
        "DE893704004405320130000", // too long for DE (glued digit)
        "XDE89370400440532013000", // glued to a word
        "GB82 WEST 1234 5698 7654 31",
        "AB12 some words here",
    ] {
        assert_none(&d, text);
    }
}

#[test]
fn ssn_detector() {
    let d = SsnDetector;
    for ssn in ["123-45-6789", "001-01-0001", "665-99-9999", "899-12-3456"] {
        assert_finds(&d, &format!("SSN {ssn}."), ssn);
    }
    for text in [
        "000-12-3456",
        "666-12-3456",
        "900-12-3456",
        "987-65-4321",
        "123-00-4567",
        "123-45-0000",
        "1123-45-6789",
        "123-45-67890",
        "123456789",
        "12-345-6789",
        "x123-45-6789",
    ] {
        assert_none(&d, text);
    }
}

#[test]
fn ipv4_detector() {
    let d = Ipv4Detector;
    for (text, ip) in [
        ("from 192.168.1.1 to", "192.168.1.1"),
        ("dns 8.8.8.8:53", "8.8.8.8"),
        ("255.255.255.255", "255.255.255.255"),
        ("ip=10.0.0.1.", "10.0.0.1"),
        ("(0.0.0.0)", "0.0.0.0"),
    ] {
        assert_finds(&d, text, ip);
    }
    for text in [
        "256.1.1.1",
        "1.2.3.256",
        "1.2.3.4.5",
        "version 1.2.3",
        "1234.1.1.1",
        "01.02.03.04",
        "v1.2.3.4",
        "1.2.3.4a",
    ] {
        assert_none(&d, text);
    }
}

#[test]
fn ipv6_detector() {
    let d = Ipv6Detector;
    for ip in [
        "2001:db8::8a2e:370:7334",
        "2001:0db8:85a3:0000:0000:8a2e:0370:7334",
        "fe80::1",
        "::ffff:192.0.2.128",
        "FE80::ABCD:1",
    ] {
        assert_finds(&d, &format!("addr {ip}, ok"), ip);
        assert_finds(&d, &format!("[{ip}]:443"), ip);
    }
    for text in [
        "at 12:30:45",
        "mac 00:1a:2b:3c:4d:5e",
        "::1",
        "::",
        "C++ std::vector",
        "2001:db8::g",
        "1:2:3:4:5:6:7:8:9",
        "coffee::1",
    ] {
        assert_none(&d, text);
    }
}

#[test]
fn builtin_detectors_find_nothing_in_masks() {
    let masks = [
        "[REDACTED:email]",
        "[REDACTED:ipv6]",
        "[card:0123456789ab]",
        "[ipv6:abcdef012345]",
        "[phone:012345678901]",
        "************4242",
        "j***@example.com",
        "***.***.*.1",
        "****:***::1",
        "*******6789",
    ];
    for d in builtin_detectors() {
        for mask in masks {
            assert_none(&*d, mask);
        }
    }
}
