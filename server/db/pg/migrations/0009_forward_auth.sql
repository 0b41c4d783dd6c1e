CREATE TABLE "forwardAuthCount" (
	"app" text NOT NULL,
	"hour" bigint NOT NULL,
	"allowed" bigint NOT NULL,
	CONSTRAINT "forwardAuthCount_app_hour_pk" PRIMARY KEY("app","hour")
);
--> statement-breakpoint
CREATE TABLE "twoFactorSession" (
	"sessionId" text PRIMARY KEY NOT NULL,
	"method" text NOT NULL,
	"createdAt" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "twoFactorSession" ADD CONSTRAINT "twoFactorSession_sessionId_session_id_fk" FOREIGN KEY ("sessionId") REFERENCES "public"."session"("id") ON DELETE cascade ON UPDATE no action;