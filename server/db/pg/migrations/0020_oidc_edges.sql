ALTER TABLE "oidcClient" ADD COLUMN "subjectType" text DEFAULT 'public' NOT NULL;--> statement-breakpoint
ALTER TABLE "oidcClient" ADD COLUMN "backchannelFailingSince" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "oidcClient" ADD COLUMN "backchannelLastError" text;