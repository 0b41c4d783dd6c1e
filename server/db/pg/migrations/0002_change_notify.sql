-- Hand-written (drizzle-kit generate --custom): the change signal of several instances
-- (server/db/pg/change-signal.ts). Every committed write to a table the in-memory caches rely on
-- (sessions with their user, API keys with their owner's memberships) sends one NOTIFY on the
-- channel gatehouse_change with the table's name, delivered by PostgreSQL at commit to every
-- instance listening, whoever wrote: an instance, the CLI or SQL run by hand. Statement-level, and
-- PostgreSQL folds identical notifications of one transaction into one.
CREATE OR REPLACE FUNCTION gatehouse_notify_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('gatehouse_change', TG_TABLE_NAME);
  RETURN NULL;
END;
$$;
--> statement-breakpoint
CREATE TRIGGER gatehouse_change AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "user" FOR EACH STATEMENT EXECUTE FUNCTION gatehouse_notify_change();
--> statement-breakpoint
CREATE TRIGGER gatehouse_change AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "session" FOR EACH STATEMENT EXECUTE FUNCTION gatehouse_notify_change();
--> statement-breakpoint
CREATE TRIGGER gatehouse_change AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "account" FOR EACH STATEMENT EXECUTE FUNCTION gatehouse_notify_change();
--> statement-breakpoint
CREATE TRIGGER gatehouse_change AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "organization" FOR EACH STATEMENT EXECUTE FUNCTION gatehouse_notify_change();
--> statement-breakpoint
CREATE TRIGGER gatehouse_change AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "member" FOR EACH STATEMENT EXECUTE FUNCTION gatehouse_notify_change();
--> statement-breakpoint
CREATE TRIGGER gatehouse_change AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "team" FOR EACH STATEMENT EXECUTE FUNCTION gatehouse_notify_change();
--> statement-breakpoint
CREATE TRIGGER gatehouse_change AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "teamMember" FOR EACH STATEMENT EXECUTE FUNCTION gatehouse_notify_change();
--> statement-breakpoint
CREATE TRIGGER gatehouse_change AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "apikey" FOR EACH STATEMENT EXECUTE FUNCTION gatehouse_notify_change();
--> statement-breakpoint
CREATE TRIGGER gatehouse_change AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "twoFactor" FOR EACH STATEMENT EXECUTE FUNCTION gatehouse_notify_change();
--> statement-breakpoint
CREATE TRIGGER gatehouse_change AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "passkey" FOR EACH STATEMENT EXECUTE FUNCTION gatehouse_notify_change();
--> statement-breakpoint
CREATE TRIGGER gatehouse_change AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "keypair" FOR EACH STATEMENT EXECUTE FUNCTION gatehouse_notify_change();
