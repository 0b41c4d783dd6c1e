-- Hand-written (drizzle-kit generate --custom): the directory's own notification. The LDAP
-- directory keeps everyone it shows in memory (features/ldap/directory-index.ts) and starts over
-- only when what it shows changed: a person's shown columns, an organization, a membership, a team
-- (not a session, an audit row, a throttle row or a login method). Those writes also notify
-- gatehouse_change with the payload 'directory' (statement-level; PostgreSQL folds identical
-- notifications of one transaction into one), which the change signal counts as its own scope.
CREATE OR REPLACE FUNCTION gatehouse_notify_directory() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('gatehouse_change', 'directory');
  RETURN NULL;
END;
$$;
--> statement-breakpoint
CREATE TRIGGER gatehouse_directory AFTER INSERT OR DELETE OR TRUNCATE ON "user" FOR EACH STATEMENT EXECUTE FUNCTION gatehouse_notify_directory();
--> statement-breakpoint
CREATE TRIGGER gatehouse_directory_update AFTER UPDATE OF "id", "name", "email", "emailVerified", "createdAt", "updatedAt", "username", "displayUsername", "role", "banned", "banExpires", "isAnonymous" ON "user" FOR EACH STATEMENT EXECUTE FUNCTION gatehouse_notify_directory();
--> statement-breakpoint
CREATE TRIGGER gatehouse_directory AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "organization" FOR EACH STATEMENT EXECUTE FUNCTION gatehouse_notify_directory();
--> statement-breakpoint
CREATE TRIGGER gatehouse_directory AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "member" FOR EACH STATEMENT EXECUTE FUNCTION gatehouse_notify_directory();
--> statement-breakpoint
CREATE TRIGGER gatehouse_directory AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "team" FOR EACH STATEMENT EXECUTE FUNCTION gatehouse_notify_directory();
--> statement-breakpoint
CREATE TRIGGER gatehouse_directory AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "teamMember" FOR EACH STATEMENT EXECUTE FUNCTION gatehouse_notify_directory();
