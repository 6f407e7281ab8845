-- An agent a person's OAuth consent mints is pending until its app exchanges
-- the authorization code (decision 0026): it holds nothing and can do nothing,
-- and the app is not listed as connected. The column is the moment the code
-- expires; the exchange clears it, and the upkeep removes an agent whose moment
-- passed with it still set.
ALTER TABLE agents ADD COLUMN connection_pending_until INTEGER;

-- Connections made before this migration: an app that exchanged its code has
-- been issued tokens (`last_used_at` is set at every issue) or has a redeemed
-- code; any other was never exchanged, and is pending until its code's two
-- minutes from consent were up (so, almost always, already removable).
UPDATE agents SET connection_pending_until =
    (SELECT c.connected_at + 120000 FROM oauth_connections c WHERE c.agent_id = agents.id)
WHERE id IN (SELECT agent_id FROM oauth_connections WHERE last_used_at IS NULL)
  AND id NOT IN (SELECT agent_id FROM oauth_codes WHERE redeemed_at IS NOT NULL);
