import { adminContract } from './admin/panel-contract.js'
import { apiKeyContract } from './api-key/panel-contract.js'
import { jwtContract } from './jwt/panel-contract.js'
import { oidcContract } from './oidc-provider/panel-contract.js'
import { twoFactorContract } from './two-factor/panel-contract.js'
import { networkContract } from './network/panel-contract.js'
import { organizationContract } from './organization/panel-contract.js'
import { backupContract } from './backup/panel-contract.js'
import { socialContract } from './social/panel-contract.js'
import { auditContract } from './audit/panel-contract.js'
import { overviewContract } from './overview/panel-contract.js'
import { settingsContract } from './settings/panel-contract.js'
import { mailContract } from './mail/panel-contract.js'
import { forwardAuthContract } from './forward-auth/panel-contract.js'
import { importContract } from './import/panel-contract.js'
import { genericOAuthContract } from './generic-oauth/panel-contract.js'

/**
 * The panel operations declared by feature folders, merged into the panel contract. Renderer-safe:
 * only zod contract modules (features/<name>/panel-contract.ts) are imported here.
 */
export const featureContracts = {
  ...organizationContract,
  ...adminContract,
  ...apiKeyContract,
  ...jwtContract,
  ...oidcContract,
  ...twoFactorContract,
  ...networkContract,
  ...backupContract,
  ...socialContract,
  ...auditContract,
  ...overviewContract,
  ...settingsContract,
  ...mailContract,
  ...forwardAuthContract,
  ...importContract,
  ...genericOAuthContract,
}
