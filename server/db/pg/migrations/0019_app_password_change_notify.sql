-- Hand-written (drizzle-kit generate --custom): a revoked app password notifies the instances
-- (gatehouse_change, as 0002 does for the other cached tables), so whatever an instance remembers
-- of an app password's check (the LDAP bind memo) is forgotten at once when the CLI, another
-- instance or a password change, ban or deletion elsewhere revokes it. Deletions only: revoking
-- deletes the row, and the once-a-minute lastUsedAt update must not empty every cache.
CREATE TRIGGER gatehouse_change AFTER DELETE OR TRUNCATE ON "appPassword" FOR EACH STATEMENT EXECUTE FUNCTION gatehouse_notify_change();
