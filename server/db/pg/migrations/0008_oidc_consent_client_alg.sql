CREATE TABLE "oidcConsent" (
	"userId" text NOT NULL,
	"clientId" text NOT NULL,
	"scopes" jsonb NOT NULL,
	"claims" jsonb NOT NULL,
	"grantId" text,
	"createdAt" timestamp (3) with time zone NOT NULL,
	"updatedAt" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "oidcConsent_userId_clientId_pk" PRIMARY KEY("userId","clientId")
);
--> statement-breakpoint
ALTER TABLE "oidcClient" ADD COLUMN "resourceServer" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "oidcClient" ADD COLUMN "idTokenSignedResponseAlg" text DEFAULT 'RS256' NOT NULL;--> statement-breakpoint
ALTER TABLE "oidcConsent" ADD CONSTRAINT "oidcConsent_userId_user_id_fk" FOREIGN KEY ("userId") REFERENCES "public"."user"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "oidcConsent" ADD CONSTRAINT "oidcConsent_clientId_oidcClient_clientId_fk" FOREIGN KEY ("clientId") REFERENCES "public"."oidcClient"("clientId") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "oidc_consent_client_id_idx" ON "oidcConsent" USING btree ("clientId");