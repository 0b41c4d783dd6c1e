import { IconAddressBook } from '@tabler/icons-react'
import { lazy } from 'react'
import { definePanelFeature } from '../panel-feature'

/** The LDAP interface in the control panel (renderer/src/features/panel-feature.ts): its own view edits every `ldap.*` key. */
export const ldapPanel = definePanelFeature({
  name: 'ldap',
  views: [{ name: 'ldap', label: 'LDAP', icon: IconAddressBook, Page: lazy(() => import('./LdapView')) }],
  editedElsewhere: {
    ldap: 'the LDAP view (listener, base DN, roles that may search, app recipes); ldap.tls is read at start-up',
  },
})
