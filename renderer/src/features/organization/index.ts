import { IconBuilding } from '@tabler/icons-react'
import { lazy } from 'react'
import { roleImpact } from '../groups/role-impact'
import { definePanelFeature } from '../panel-feature'

/** The organization feature in the control panel (renderer/src/features/panel-feature.ts). */
export const organizationPanel = definePanelFeature({
  name: 'organization',
  views: [{ name: 'organizations', label: 'Organizations', icon: IconBuilding, Page: lazy(() => import('./OrganizationsPage')) }],
  settings: [
    {
      section: 'organizations',
      fields: [
        {
          path: 'organization.allowUserToCreateOrganization',
          label: 'Users may create organizations',
          help: 'Otherwise only an administrator can.',
          kind: 'switch',
        },
        {
          path: 'organization.organizationLimit',
          label: 'Organizations per user',
          help: 'Empty: no limit.',
          kind: 'optional-number',
        },
        {
          path: 'organization.creatorRole',
          label: 'Role of the creator',
          help: 'The role given to whoever creates an organization.',
          kind: 'text',
        },
        {
          path: 'organization.membershipLimit',
          label: 'Members per organization',
          help: 'Invitations beyond this are refused.',
          kind: 'number',
          min: 1,
        },
        {
          path: 'organization.invitationLimit',
          label: 'Pending invitations per organization',
          help: 'Waiting invitations at most.',
          kind: 'number',
        },
        {
          path: 'organization.invitationExpiresIn',
          label: 'Invitation lifetime',
          help: 'How long an invitation can be accepted.',
          kind: 'seconds',
        },
        {
          path: 'organization.cancelPendingInvitationsOnReInvite',
          label: 'A new invitation replaces the pending one',
          help: 'Inviting the same address again cancels the earlier invitation.',
          kind: 'switch',
        },
        {
          path: 'organization.invitationURL',
          label: 'Invitation link',
          help: 'Where the link in the mail points; {id} is replaced by the invitation. Empty: this server.',
          kind: 'optional-text',
        },
        {
          path: 'organization.teams.enabled',
          label: 'Teams',
          help: 'Organizations can have teams inside them.',
          kind: 'switch',
        },
        {
          path: 'organization.teams.maximumTeams',
          label: 'Teams per organization',
          help: 'Empty: no limit.',
          kind: 'optional-number',
        },
        {
          path: 'organization.teams.allowRemovingAllTeams',
          label: 'Allow removing the last team',
          help: 'An organization may end up with no team.',
          kind: 'switch',
        },
        {
          path: 'organization.roles',
          label: 'Custom organization roles',
          help: 'role → resource → allowed actions, added to owner, admin and member.',
          kind: 'json',
          // Removing or renaming a member role that SAML apps name (`acme:reviewer`) asks first.
          impact: roleImpact('organizationRoles'),
        },
      ],
    },
  ],
})
