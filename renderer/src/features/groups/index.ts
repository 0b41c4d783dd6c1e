import { definePanelFeature } from '../panel-feature'

/** The group-name rule in the control panel: edited beside the groups claim, it names groups on every face. */
export const groupsPanel = definePanelFeature({
  name: 'groups',
  views: [],
  editedElsewhere: {
    groups: 'the Single sign-on view (group names: the OIDC groups claim, Remote-Groups, LDAP and SAML)',
  },
})
