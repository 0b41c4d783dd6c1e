/**
 * The SAML protocol code in one lazily loaded module (xmldom, xml-crypto, the flows, the service
 * providers' metadata): the mount, the routes, the panel and the cleanup job load it through
 * `samlProtocol()`, so a server with SAML off never loads it and the bundle has one chunk for it.
 */
export { appsFor, sessionAppCount } from './apps.js'
export { handleSaml } from './flows.js'
export {
  allServiceProviders,
  changeServiceProvider,
  createServiceProvider,
  fetchMetadata,
  removeServiceProvider,
  viewOf,
} from './service-providers.js'
export { deleteExpiredRequests } from './store.js'
