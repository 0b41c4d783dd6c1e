/**
 * `npm run check:deps`: no import cycles at run time (type-only imports are erased and left out),
 * and features import core, never each other except through what they declare.
 */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'An import cycle: modules that need each other to load.',
      from: {},
      to: { circular: true, viaOnly: { dependencyTypesNot: ['type-only'] } },
    },
    {
      name: 'features-stay-apart',
      severity: 'error',
      comment: 'A feature folder imports core and framework modules, not another feature (declared dependencies below).',
      from: { path: '^server/features/([^/]+)/', pathNot: '^server/features/(two-factor|oidc-provider)/' },
      to: { path: '^server/features/([^/]+)/', pathNot: ['^server/features/$1/'] },
    },
    {
      name: 'two-factor-depends-on-passkey-only',
      severity: 'error',
      comment: 'Declared dependency: a passkey counts as a second factor, so two-factor reads passkeys; nothing else.',
      from: { path: '^server/features/two-factor/' },
      to: { path: '^server/features/', pathNot: ['^server/features/(two-factor|passkey)/'] },
    },
    {
      name: 'oidc-provider-depends-on-jwt-only',
      severity: 'error',
      comment: 'Declared dependency: the OpenID provider signs ID tokens with the jwt feature\'s keys and publishes its JWKS; nothing else.',
      from: { path: '^server/features/oidc-provider/' },
      to: { path: '^server/features/[^/]+/', pathNot: ['^server/features/(oidc-provider|jwt)/'] },
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
