use agboss_core::prelude::*;

pub struct Plain;

#[agent(name = "shipping-agent", description = "Tracks parcels")]
pub struct ShippingAgent;

// [agent.agent-tool-self]
#[agent(name = "loop-agent", description = "Asks itself", agent_tools = [ShippingAgent, LoopAgent])]
pub struct LoopAgent;

// [agent.agent-tool-self], spelled `Self`
#[agent(name = "self-agent", description = "Asks Self", agent_tools = [Self])]
pub struct SelfAgent;

// Listed twice.
#[agent(name = "twice-agent", description = "Asks twice", agent_tools = [ShippingAgent, ShippingAgent])]
pub struct TwiceAgent;

// Not an agent: the Agent trait's own message.
#[agent(name = "plain-agent", description = "Asks a plain type", agent_tools = [Plain])]
pub struct PlainAgent;

fn main() {}
