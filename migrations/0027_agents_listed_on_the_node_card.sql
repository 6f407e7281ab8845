-- Whether an agent's owner lists it on the node's own A2A card
-- (/.well-known/agent-card.json, decision 0031): its id, name and card, to
-- anyone who asks. Off unless the owner turns it on; an agent without a
-- policy row is not listed.
ALTER TABLE agent_messaging_policies ADD COLUMN listed_on_node_card INTEGER NOT NULL DEFAULT 0;
