CREATE TABLE "oidcClient" (
	"clientId" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"logo" text,
	"redirectUris" jsonb NOT NULL,
	"postLogoutRedirectUris" jsonb NOT NULL,
	"secretHash" text,
	"public" boolean DEFAULT false NOT NULL,
	"pkceRequired" boolean DEFAULT true NOT NULL,
	"skipConsent" boolean DEFAULT false NOT NULL,
	"allowedOrganizations" jsonb NOT NULL,
	"allowedTeams" jsonb NOT NULL,
	"createdAt" timestamp (3) with time zone NOT NULL,
	"updatedAt" timestamp (3) with time zone NOT NULL,
	"secretRotatedAt" timestamp (3) with time zone
);
--> statement-breakpoint
CREATE TABLE "oidcModel" (
	"kind" text NOT NULL,
	"id" text NOT NULL,
	"payload" text NOT NULL,
	"grantId" text,
	"uid" text,
	"userCode" text,
	"gatehouseSessionId" text,
	"consumedAt" timestamp (3) with time zone,
	"expiresAt" timestamp (3) with time zone,
	CONSTRAINT "oidcModel_kind_id_pk" PRIMARY KEY("kind","id")
);
--> statement-breakpoint
CREATE INDEX "oidc_model_grant_id_idx" ON "oidcModel" USING btree ("grantId");--> statement-breakpoint
CREATE INDEX "oidc_model_uid_idx" ON "oidcModel" USING btree ("uid");--> statement-breakpoint
CREATE INDEX "oidc_model_user_code_idx" ON "oidcModel" USING btree ("userCode");--> statement-breakpoint
CREATE INDEX "oidc_model_gatehouse_session_id_idx" ON "oidcModel" USING btree ("gatehouseSessionId");--> statement-breakpoint
CREATE INDEX "oidc_model_expires_at_idx" ON "oidcModel" USING btree ("expiresAt");