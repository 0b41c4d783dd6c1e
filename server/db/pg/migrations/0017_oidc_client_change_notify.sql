-- Hand-written (drizzle-kit generate --custom): every write to an OpenID Connect client notifies
-- the instances (gatehouse_change, as 0002 does for the other cached tables). Each instance keeps
-- the clients it authenticates in memory (features/oidc-provider/store.ts) and empties that cache
-- when the change signal moves: without this trigger a secret rotated, a redirect URI changed or
-- a client deleted by the CLI or another instance went unnoticed, and the old secret kept working.
CREATE TRIGGER gatehouse_change AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "oidcClient" FOR EACH STATEMENT EXECUTE FUNCTION gatehouse_notify_change();
