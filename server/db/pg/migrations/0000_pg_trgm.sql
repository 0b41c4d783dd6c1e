-- Hand-written (drizzle-kit generate --custom): pg_trgm backs the GIN trigram indexes list-users
-- searches with (user_email_trgm_idx, user_name_trgm_idx, created by the next migration). It is a
-- trusted extension (PostgreSQL 13+): the database owner may create it without superuser rights.
CREATE EXTENSION IF NOT EXISTS pg_trgm;
