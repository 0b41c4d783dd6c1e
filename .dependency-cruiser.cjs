/**
 * `npm run check:deps`: no import cycles at all, type-only imports included (a type cycle is still two
 * modules that cannot be understood apart; issue 26),
 * and features import core, never each other except through what they declare.
 */
module.exports = {
  forbidden: [
    {
      name: 'lower-floors-import-no-feature',
      severity: 'error',
      comment:
        "Arrows point down in fact (issue 39): db/, config/, core/, http/, mail/, crypto/, secondary-storage/, log.ts and secret.ts import no feature folder, no aggregation of the features (server/features/*.ts: the list, the generated tables, columns, sections and contracts), no composition module (gatehouse.ts, main.ts, cli*.ts, config-schema.ts, schema.ts, gen-pg-schema.ts, routes.ts) and nothing of server/panel/. The composition root imports the aggregations and hands them down: the config schema through config/schema.ts's provideConfigSchema and WholeConfig, the tables through db/schema.ts's provideTables and db/tables.ts's DatabaseSchema (and the new-user defaults of the features' columns through core/user-defaults.ts), the routes through http/routes/index.ts routesOf(features), the features through features-of.ts.",
      from: {
        path: '^server/(db|config|core|http|mail|crypto|secondary-storage)/|^server/(log|secret)\\.ts$',
      },
      to: {
        path: '^server/features/|^server/(gatehouse|main|cli|cli-user|config-schema|schema|gen-pg-schema|routes)\\.ts$|^server/panel/',
      },
    },
    {
      name: 'lower-floors-reach-no-feature',
      severity: 'error',
      comment:
        'The same, through any chain of imports (type imports counted): nothing a lower floor loads, however indirectly, is a feature folder, an aggregation of the features or a composition module. The feature frame (feature.ts) names PanelEnv from panel/panel-env.ts, which leaves out the panel contracts every feature declares.',
      from: {
        path: '^server/(db|config|core|http|mail|crypto|secondary-storage)/|^server/(log|secret)\\.ts$',
      },
      to: {
        path: '^server/features/|^server/(gatehouse|main|cli|cli-user|config-schema|schema|gen-pg-schema|routes)\\.ts$',
        reachable: true,
      },
    },
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'An import cycle: modules that need each other to load.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'features-stay-apart',
      severity: 'error',
      comment: 'A feature folder imports core and framework modules, not another feature (declared dependencies below).',
      from: {
        path: '^server/features/([^/]+)/',
        pathNot:
          '^server/features/(two-factor|username|account|admin|overview|hosted-pages|oidc-provider|import|forward-auth|jwt|api-key|groups|ldap|saml)/',
      },
      to: { path: '^server/features/([^/]+)/', pathNot: ['^server/features/$1/'] },
    },
    {
      name: 'ldap-depends-on-email-password-admin-and-groups-only',
      severity: 'error',
      comment:
        "Declared dependency: an LDAP bind is email-password's password check (identifyByPassword), password modify is account's change of one's own password, who may search follows admin's role rule, the groups are the groups feature's one group-name rule and the uid is username's login-name rule. Nothing else.",
      from: { path: '^server/features/ldap/' },
      to: {
        path: '^server/features/[^/]+/',
        pathNot: [
          '^server/features/ldap/',
          '^server/features/email-password/sign-in\\.ts$',
          '^server/features/account/rules\\.ts$',
          '^server/features/admin/access\\.ts$',
          '^server/features/groups/names\\.ts$',
          '^server/features/app-passwords/verify\\.ts$',
          '^server/features/username/rules\\.ts$',
        ],
      },
    },
    {
      name: 'two-factor-depends-on-passkey-only',
      severity: 'error',
      comment: 'Declared dependency: a passkey counts as a second factor, so two-factor reads passkeys; nothing else.',
      from: { path: '^server/features/two-factor/' },
      to: { path: '^server/features/', pathNot: ['^server/features/(two-factor|passkey)/'] },
    },
    {
      name: 'import-depends-on-admin-and-username-only',
      severity: 'error',
      comment:
        "Declared dependency: an imported user's role and username follow the admin feature's roles and the username feature's rules; nothing else.",
      from: { path: '^server/features/import/' },
      to: { path: '^server/features/', pathNot: ['^server/features/(import|admin|username)/'] },
    },
    {
      name: 'username-depends-on-email-password-only',
      severity: 'error',
      comment:
        "Declared dependency: username sign-in is email-password's password sign-in sequence (better-auth's username plugin needs emailAndPassword); nothing else.",
      from: { path: '^server/features/username/' },
      to: { path: '^server/features/', pathNot: ['^server/features/(username|email-password)/'] },
    },
    {
      name: 'account-depends-on-email-password-only',
      severity: 'error',
      comment:
        "Declared dependency: the account endpoints use email-password's password policy, verification mail, notices and route helpers; nothing else.",
      from: { path: '^server/features/account/' },
      to: { path: '^server/features/', pathNot: ['^server/features/(account|email-password)/'] },
    },
    {
      name: 'admin-depends-on-email-password-organization-and-magic-link-service-only',
      severity: 'error',
      comment:
        "Declared dependency: an admin setting a password applies email-password's policy and notice; the panel's user page lists the user's organization memberships; the drawer's set-up link is a magic link (magic-link/service.ts). Nothing else.",
      from: { path: '^server/features/admin/' },
      to: {
        path: '^server/features/',
        pathNot: ['^server/features/(admin|email-password|organization)/', '^server/features/magic-link/service\\.ts$'],
      },
    },
    {
      name: 'overview-depends-on-admin-forward-auth-and-organization-only',
      severity: 'error',
      comment:
        "Declared dependency: the first-run checklist asks whether an administrator exists, by admin's own role rule; the overview shows forward auth's allowed counts per app and counts organizations through organization's store. Nothing else.",
      from: { path: '^server/features/overview/' },
      to: {
        path: '^server/features/',
        pathNot: ['^server/features/(overview|admin|forward-auth)/', '^server/features/organization/store\\.ts$'],
      },
    },
    {
      name: 'hosted-pages-depends-on-social-only',
      severity: 'error',
      comment:
        'Declared dependency: the sign-in page offers a button per enabled social provider, named by the social feature. Nothing else.',
      from: { path: '^server/features/hosted-pages/' },
      to: { path: '^server/features/', pathNot: ['^server/features/(hosted-pages|social)/'] },
    },
    {
      name: 'oidc-provider-depends-on-jwt-organization-store-and-groups-only',
      severity: 'error',
      comment:
        "Declared dependency: the OpenID provider signs ID tokens with the jwt feature's keys and publishes its JWKS, reads memberships (client restrictions) through organization's store, and its claims from the faces' one record of a person (groups/person.ts, the one group rule); nothing else.",
      from: { path: '^server/features/oidc-provider/' },
      to: {
        path: '^server/features/[^/]+/',
        pathNot: [
          '^server/features/(oidc-provider|jwt)/',
          '^server/features/organization/store\\.ts$',
          '^server/features/groups/(names|person)\\.ts$',
        ],
      },
    },
    {
      name: 'saml-depends-on-groups-only',
      severity: 'error',
      comment:
        "Declared dependency: the SAML identity provider's attributes and allowed groups come from the faces' one record of a person (groups/person.ts) and the one group rule; nothing else.",
      from: { path: '^server/features/saml/' },
      to: { path: '^server/features/[^/]+/', pathNot: ['^server/features/saml/', '^server/features/groups/(names|person)\\.ts$'] },
    },
    {
      name: 'jwt-and-api-key-depend-on-organization-store-only',
      severity: 'error',
      comment:
        "Declared dependency: a token's organization claims and an organization-owned key's permissions follow the caller's membership, asked of organization's store (no SQL on its tables). Nothing else.",
      from: { path: '^server/features/(jwt|api-key)/' },
      to: { path: '^server/features/[^/]+/', pathNot: ['^server/features/$1/', '^server/features/organization/store\\.ts$'] },
    },
    {
      name: 'forward-auth-depends-on-organization-and-two-factor-only',
      severity: 'error',
      comment:
        "Declared dependency: forward auth's rules require organizations and teams (organization's store functions, no SQL on its tables) and a passed second factor (two-factor's session marker); its headers take the group names from the one group rule and the login name from username's rule. Nothing else.",
      from: { path: '^server/features/forward-auth/' },
      to: {
        path: '^server/features/[^/]+/',
        pathNot: ['^server/features/(forward-auth|organization|two-factor|groups)/', '^server/features/username/rules\\.ts$'],
      },
    },
    {
      name: 'groups-depends-on-organization-store-slugs-and-login-name-only',
      severity: 'error',
      comment:
        "Declared dependency: group names are made of memberships and teams, read through organization's store; the names rules require are checked against the organizations with organization's slug rule (slugs.ts); the faces' record of a person (person.ts) carries the login name by username's rule (username/rules.ts). Nothing else.",
      from: { path: '^server/features/groups/' },
      to: {
        path: '^server/features/[^/]+/',
        pathNot: ['^server/features/groups/', '^server/features/organization/(store|slugs)\\.ts$', '^server/features/username/rules\\.ts$'],
      },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.tsx', '.js'] },
    exclude: { path: ['^node_modules', '^out', '^dist'] },
  },
}
