import { Anchor, Text } from '@mantine/core'
import type { HostedPage } from '../../../server/features/hosted-page-list'
import { type PublicConfig, pageName, pageURL } from './api'
import { FormAlert, Layout } from './Layout'
import type { PageProps } from './page-props'
import { AccountActivityPage } from './account/Activity'
import { AccountDeletePage } from './account/Delete'
import { AccountLinkedPage } from './account/Linked'
import { AccountOverviewPage } from './account/Overview'
import { AccountPasswordPage } from './account/Password'
import { AccountPasskeysPage } from './account/Passkeys'
import { AccountProfilePage } from './account/Profile'
import { AccountSessionsPage } from './account/Sessions'
import { AccountTwoFactorPage } from './account/TwoFactor'
import { AcceptInvitationPage } from './pages/AcceptInvitation'
import { AppPasswordsPage } from './pages/AppPasswords'
import { ConnectedAppsPage } from './pages/ConnectedApps'
import { ConsentPage } from './pages/Consent'
import { DevicePage } from './pages/Device'
import { ErrorPage } from './pages/ErrorPage'
import { ForgotPasswordPage, ResetPasswordPage } from './pages/Password'
import { SignInPage } from './pages/SignIn'
import { SignOutPage } from './pages/SignOut'
import { SignUpPage } from './pages/SignUp'
import { VerifyEmailPage } from './pages/VerifyEmail'

/** Each hosted page's component: every page a feature declares (pages.ts), no other (tsc checks both ways). */
const PAGES: Record<HostedPage, (props: PageProps) => React.JSX.Element> = {
  'sign-in': SignInPage,
  'sign-up': SignUpPage,
  'forgot-password': ForgotPasswordPage,
  'reset-password': ResetPasswordPage,
  'verify-email': VerifyEmailPage,
  consent: ConsentPage,
  'sign-out': SignOutPage,
  error: ErrorPage,
  'accept-invitation': AcceptInvitationPage,
  account: AccountOverviewPage,
  'account/password': AccountPasswordPage,
  'account/two-factor': AccountTwoFactorPage,
  'account/sessions': AccountSessionsPage,
  'account/passkeys': AccountPasskeysPage,
  'account/profile': AccountProfilePage,
  'account/activity': AccountActivityPage,
  'account/linked': AccountLinkedPage,
  'account/delete': AccountDeletePage,
  'account/apps': ConnectedAppsPage,
  'account/app-passwords': AppPasswordsPage,
  device: DevicePage,
}

export function App({ config, configError }: { config: PublicConfig; configError: string | null }) {
  if (configError) {
    return (
      <Layout config={config} title="Unavailable">
        <FormAlert message={configError} />
      </Layout>
    )
  }
  const Page = (PAGES as Record<string, (props: PageProps) => React.JSX.Element>)[pageName]
  if (!Page) {
    return (
      <Layout config={config} title="Page not found">
        <Text>
          <Anchor href={pageURL('sign-in')}>Go to sign-in</Anchor>
        </Text>
      </Layout>
    )
  }
  return <Page config={config} />
}
