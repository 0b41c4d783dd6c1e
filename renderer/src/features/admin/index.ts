import { IconUsers } from '@tabler/icons-react'
import { lazy } from 'react'
import { roleImpact } from '../groups/role-impact'
import { definePanelFeature } from '../panel-feature'

/** The admin feature in the control panel (renderer/src/features/panel-feature.ts). */
export const adminPanel = definePanelFeature({
  name: 'admin',
  views: [{ name: 'users', label: 'Users', icon: IconUsers, Page: lazy(() => import('./Users')) }],
  settings: [
    {
      section: 'admin',
      fields: [
        {
          path: 'admin.defaultRole',
          label: 'Role of new users',
          help: 'Given at sign-up.',
          kind: 'text',
        },
        {
          path: 'admin.adminRoles',
          label: 'Administrator roles',
          help: 'Users with one of these roles are administrators.',
          kind: 'tags',
        },
        {
          path: 'admin.adminUserIds',
          label: 'Administrators by user id',
          help: 'These users pass every permission check, whatever their role.',
          kind: 'tags',
        },
        {
          path: 'admin.impersonationSessionDuration',
          label: 'Impersonation lasts',
          help: 'How long an administrator may act as another user.',
          kind: 'seconds',
          min: 1,
        },
        {
          path: 'admin.defaultBanReason',
          label: 'Ban reason when none is given',
          help: 'Shown to the banned user.',
          kind: 'text',
        },
        {
          path: 'admin.defaultBanExpiresIn',
          label: 'Ban length when none is given',
          help: 'Empty: until lifted.',
          kind: 'optional-seconds',
        },
        {
          path: 'admin.bannedUserMessage',
          label: 'Message to banned users',
          help: 'The answer a banned user gets at sign-in.',
          kind: 'text',
        },
        {
          path: 'admin.roles',
          label: 'Custom admin roles',
          help: 'role → {"user": [actions], "session": [actions]}.',
          kind: 'json',
          // Removing or renaming a role that rules name (forward auth, SAML apps, LDAP, two-factor) asks first.
          impact: roleImpact('roles'),
        },
      ],
    },
  ],
})
