import { apiKeyContract } from './api-key/panel-contract.js'
import { jwtContract } from './jwt/panel-contract.js'
import { twoFactorContract } from './two-factor/panel-contract.js'
import { networkContract } from './network/panel-contract.js'
import { backupContract } from './backup/panel-contract.js'
import { mailContract } from './mail/panel-contract.js'

/**
 * The panel operations declared by feature folders, merged into the panel contract. Renderer-safe:
 * only zod contract modules (features/<name>/panel-contract.ts) are imported here.
 */
export const featureContracts = {
  ...apiKeyContract,
  ...jwtContract,
  ...twoFactorContract,
  ...networkContract,
  ...backupContract,
  ...mailContract,
}
