import type { Feature } from '../feature.js'
import { apiKeyFeature } from './api-key/index.js'
import { jwtFeature } from './jwt/index.js'
import { passkeyFeature } from './passkey/index.js'
import { twoFactorFeature } from './two-factor/index.js'
import { networkFeature } from './network/index.js'
import { backupFeature } from './backup/index.js'
import { healthFeature } from './health/index.js'
import { mailFeature } from './mail/index.js'

/**
 * Every feature folder, once. The composition root mounts their routes and starts their background
 * work; the panel service registers their operations. A feature listed here needs no other edit
 * outside its folder except its config section (config/schema.ts), its tables (db/schema.ts) and
 * its panel contract (features/panel-contracts.ts).
 */
export const features: Feature[] = [apiKeyFeature, jwtFeature, twoFactorFeature, passkeyFeature, networkFeature, backupFeature, healthFeature, mailFeature]
