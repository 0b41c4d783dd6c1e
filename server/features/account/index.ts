import { defineFeature } from '../../feature.js'
import {
  appPasswordCreatedNotice,
  deleteAccountEmail,
  emailChangedNotice,
  NOTICE_KINDS,
  type NoticeFrame,
  newDeviceSignInNotice,
  passkeyAddedNotice,
  passwordChangedNotice,
  twoFactorDisabledNotice,
} from './mail.js'
import { noticeOfAuditEvent, noticeOfSignIn } from './notices.js'
import { accountRoutes } from './routes.js'
import { ACCOUNT_ERR } from './errors.js'
import { configSections } from './config.js'

/**
 * The signed-in user's own account (better-auth's user / account options): update-user,
 * change-password, change-email, delete-user with its mailed confirmation, list-accounts and
 * unlink-account, and the security notices (notices.ts, `accountNotices.*`). set-password (server
 * only) is in rules.ts.
 */
export const accountFeature = defineFeature({
  id: 'account',
  config: configSections,
  errors: ACCOUNT_ERR,
  routes: accountRoutes,
  audited: noticeOfAuditEvent,
  signedIn: (rc, signedIn, attempt) => noticeOfSignIn(rc.ctx, rc.meta, signedIn, attempt),
  mailPreviews: ({ appName, user, link, now }) => {
    const frame: NoticeFrame = { appName, baseURL: link(''), at: new Date(now), from: 'Firefox on Windows, address 192.0.2.10' }
    return {
      'delete-account': () => deleteAccountEmail(appName, user, link('/delete-user/callback?token=sample'), 86400),
      [NOTICE_KINDS.passwordChanged]: () => passwordChangedNotice(frame, user, 'changed'),
      [NOTICE_KINDS.emailChanged]: () => emailChangedNotice(frame, user, user.email, 'ada@new.example.com'),
      [NOTICE_KINDS.twoFactorDisabled]: () => twoFactorDisabledNotice(frame, user),
      [NOTICE_KINDS.passkeyAdded]: () => passkeyAddedNotice(frame, user, 'Work laptop'),
      [NOTICE_KINDS.appPasswordCreated]: () => appPasswordCreatedNotice(frame, user, 'NAS'),
      [NOTICE_KINDS.newDeviceSignIn]: () => newDeviceSignInNotice(frame, user),
    }
  },
})
