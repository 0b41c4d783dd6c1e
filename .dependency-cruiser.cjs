/**
 * `npm run check:deps`: no import cycles at all, type-only imports included (a type cycle is still two
 * modules that cannot be understood apart; issue 26),
 * and features import core, never each other except through what they declare.
 */
const { readFileSync } = require('node:fs')
const { join } = require('node:path')

/**
 * What each feature imports of another, each with why: the features' dependencies.ts `dependsOn`,
 * gathered by bin/gen-features.js (npm test runs it first). A target is `folder/file.ts` or a whole
 * `folder`.
 */
const declared = JSON.parse(readFileSync(join(__dirname, 'server/features/dependencies.json'), 'utf8'))
const regexOf = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
const allowed = (target) => (target.includes('/') ? `^server/features/${regexOf(target)}$` : `^server/features/${regexOf(target)}/`)

/** One rule per feature that declares dependencies: its folder may import exactly those of other features. */
const declaredDependencyRules = Object.entries(declared).map(([folder, targets]) => ({
  name: `${folder}-imports-only-its-dependencies-ts`,
  severity: 'error',
  comment: `Declared in server/features/${folder}/dependencies.ts: ${Object.entries(targets)
    .map(([target, why]) => `${target} (${why})`)
    .join('; ')}. Nothing else of another feature.`,
  from: { path: `^server/features/${regexOf(folder)}/` },
  to: { path: '^server/features/[^/]+/', pathNot: [`^server/features/${regexOf(folder)}/`, ...Object.keys(targets).map(allowed)] },
}))

/**
 * The floors, from the top (issue 51 §3): a module imports only modules of its own floor or of the
 * floors below it, type-only imports included, and every module of server/ is on one. docs/ARCHITECTURE.md's
 * table "The floors" lists the same paths (tests/unit/architecture-doc.test.ts compares them). A path
 * ending in `/` is a folder, `*` one name, `<feature>` any feature folder.
 */
const FLOORS = [
  {
    floor: 'composition',
    paths: [
      'server/gatehouse.ts',
      'server/main.ts',
      'server/cli.ts',
      'server/cli-user.ts',
      'server/config-schema.ts',
      'server/schema.ts',
      'server/gen-pg-schema.ts',
      'server/routes.ts',
      'server/features/*.ts',
      'server/panel/',
    ],
  },
  { floor: 'features', paths: ['server/features/<feature>/'] },
  {
    floor: 'frame',
    paths: [
      'server/feature.ts',
      'server/features-of.ts',
      'server/instance.ts',
      'server/config-checks.ts',
      'server/extra-oauth-providers.ts',
      'server/panel-frame/',
    ],
  },
  { floor: 'core', paths: ['server/http/', 'server/core/', 'server/mail/', 'server/secondary-storage/'] },
  {
    floor: 'base',
    paths: [
      'server/db/',
      'server/config/',
      'server/crypto/',
      'server/log.ts',
      'server/secret.ts',
      'server/version.ts',
      'server/idle-scope.ts',
    ],
  },
]
const regexOfPath = (path) => `^${regexOf(path).replace('<feature>', '[^/]+').replace('\\*', '[^/]+')}${path.endsWith('/') ? '' : '$'}`
const floorRegex = (floor) => floor.paths.map(regexOfPath).join('|')

/** One rule per floor below the top: nothing of a floor above it. */
const floorRules = FLOORS.slice(1).map((floor, i) => ({
  name: `floor-${floor.floor}-imports-nothing-above`,
  severity: 'error',
  comment: `The ${floor.floor} floor (${floor.paths.join(', ')}) imports only its own floor and those below it: not ${FLOORS.slice(0, i + 1)
    .map((above) => above.floor)
    .join(', ')}.`,
  from: { path: floorRegex(floor) },
  to: {
    path: FLOORS.slice(0, i + 1)
      .map(floorRegex)
      .join('|'),
  },
}))

module.exports = {
  forbidden: [
    ...floorRules,
    {
      name: 'every-server-module-on-a-floor',
      severity: 'error',
      comment: "A module of server/ that no floor names: add its path to FLOORS (and to docs/ARCHITECTURE.md's table).",
      from: { path: '^server/', pathNot: FLOORS.map(floorRegex).join('|') },
      to: {},
    },
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'An import cycle: modules that need each other to load.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'features-without-dependencies-ts-stay-apart',
      severity: 'error',
      comment:
        'A feature folder with no dependencies.ts imports core and framework modules, never another feature (those with one: the rules built from it, below).',
      from: {
        path: '^server/features/([^/]+)/',
        pathNot: Object.keys(declared).map((folder) => `^server/features/${regexOf(folder)}/`),
      },
      to: { path: '^server/features/([^/]+)/', pathNot: ['^server/features/$1/'] },
    },
    ...declaredDependencyRules,
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.tsx', '.js'] },
    exclude: { path: ['^node_modules', '^out', '^dist'] },
  },
}
