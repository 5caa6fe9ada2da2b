use agboss_core::prelude::*;

pub struct Plain;

#[agent(name = "shipping-agent", description = "Tracks parcels")]
pub struct ShippingAgent;

// [agent.handoff-self]
#[agent(name = "loop-agent", description = "Hands off to itself", handoffs = [ShippingAgent, LoopAgent])]
pub struct LoopAgent;

// [agent.handoff-self], spelled `Self`
#[agent(name = "self-agent", description = "Hands off to Self", handoffs = [Self])]
pub struct SelfAgent;

// Not an agent: the Agent trait's own message.
#[agent(name = "plain-agent", description = "Hands off to a plain type", handoffs = [Plain])]
pub struct PlainAgent;

fn main() {}
