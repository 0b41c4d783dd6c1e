import { Button, Checkbox, PasswordInput, Stack, Text } from '@mantine/core'
import { type FormEvent, useEffect, useRef, useState } from 'react'
import { ApiError, api, pageURL, type PublicConfig } from '../api'
import { errorsOf, type FormErrors, invalid, NO_ERRORS } from '../errors'
import type { PageProps } from '../page-props'
import { type AccountSession, AccountPage, FocusedAlert, useFocusFirstInvalid } from './common'
import type { LinkedAccount } from './Overview'

/**
 * Which field of this form a refusal concerns: a wrong current password (INVALID_PASSWORD) is the
 * current password's; the password policy's refusals (too short, too common…) are the new one's.
 */
export function passwordFormErrors(error: unknown): FormErrors {
  if (error instanceof ApiError && error.code === 'INVALID_PASSWORD') return { fields: { currentPassword: error.message }, form: null }
  return errorsOf(error, { password: 'newPassword' })
}

/**
 * "Password" (`/ui/account/password`): change it with the current one (POST /change-password),
 * "sign out my other devices" checked by default (revokeOtherSessions). An account with no
 * password (social sign-in only) is offered a link by mail to set one (POST
 * /request-password-reset: better-auth has no HTTP endpoint to set a first password; the reset
 * link creates it).
 */
export function AccountPasswordPage({ config }: PageProps) {
  return (
    <AccountPage config={config} title="Password">
      {(current) => <PasswordBody config={config} current={current} />}
    </AccountPage>
  )
}

function PasswordBody({ config, current }: { config: PublicConfig; current: AccountSession }) {
  const [hasPassword, setHasPassword] = useState<boolean | null>(null)
  useEffect(() => {
    api<LinkedAccount[]>('/list-accounts')
      .then((accounts) => setHasPassword(accounts.some((a) => a.providerId === 'credential')))
      // Unknown: offer the change form, whose refusal then says there is no password.
      .catch(() => setHasPassword(true))
  }, [])
  if (hasPassword === null) return null
  return hasPassword ? <ChangePasswordForm config={config} /> : <SetPasswordByMail config={config} current={current} />
}

function ChangePasswordForm({ config }: { config: PublicConfig }) {
  const [errors, setErrors] = useState<FormErrors>(NO_ERRORS)
  const [busy, setBusy] = useState(false)
  const [done, setDone] = useState<{ signedOutOthers: boolean } | null>(null)
  const [signOutOthers, setSignOutOthers] = useState(true)
  const form = useRef<HTMLFormElement>(null)
  const focusInvalid = useFocusFirstInvalid(form)

  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault()
    const data = new FormData(event.currentTarget)
    const currentPassword = String(data.get('currentPassword') ?? '')
    const newPassword = String(data.get('newPassword') ?? '')
    const repeat = String(data.get('repeatPassword') ?? '')
    const local: Record<string, string> = {}
    if (!currentPassword) local.currentPassword = 'Enter your current password'
    if (!newPassword) local.newPassword = 'Enter a new password'
    else if (newPassword !== repeat) local.repeatPassword = 'The two new passwords differ'
    if (Object.keys(local).length > 0) {
      setErrors({ fields: local, form: null })
      focusInvalid()
      return
    }
    setBusy(true)
    setErrors(NO_ERRORS)
    setDone(null)
    try {
      await api('/change-password', { currentPassword, newPassword, revokeOtherSessions: signOutOthers })
      setDone({ signedOutOthers: signOutOthers })
      form.current?.reset()
    } catch (e) {
      const found = passwordFormErrors(e)
      setErrors(found)
      focusInvalid()
    } finally {
      setBusy(false)
    }
  }

  return (
    <Stack gap="md">
      {done ? (
        <Text role="status" data-testid="password-changed">
          Your password was changed.{done.signedOutOthers ? ' Your other devices are signed out.' : ''}
        </Text>
      ) : null}
      <FocusedAlert message={errors.form} />
      <form ref={form} onSubmit={(e) => void submit(e)} noValidate aria-label="Change your password">
        <Stack gap="sm">
          <PasswordInput
            name="currentPassword"
            label="Current password"
            autoComplete="current-password"
            required
            error={errors.fields.currentPassword}
            aria-invalid={invalid(errors, 'currentPassword')}
          />
          <PasswordInput
            name="newPassword"
            label="New password"
            autoComplete="new-password"
            required
            error={errors.fields.newPassword}
            aria-invalid={invalid(errors, 'newPassword')}
          />
          <PasswordInput
            name="repeatPassword"
            label="Repeat the new password"
            autoComplete="new-password"
            required
            error={errors.fields.repeatPassword}
            aria-invalid={invalid(errors, 'repeatPassword')}
          />
          <Checkbox
            label="Sign out my other devices"
            checked={signOutOthers}
            onChange={(e) => setSignOutOthers(e.currentTarget.checked)}
            data-testid="sign-out-others"
          />
          <Text size="sm" c="dimmed" data-testid="app-password-note">
            {config.appPasswordsKeptOnPasswordChange
              ? 'Your app passwords keep working after the change.'
              : 'Your app passwords stop working when you change your password: make new ones for your devices afterwards.'}
          </Text>
          <Button type="submit" loading={busy}>
            Change password
          </Button>
        </Stack>
      </form>
    </Stack>
  )
}

function SetPasswordByMail({ config, current }: { config: PublicConfig; current: AccountSession }) {
  const [sent, setSent] = useState(false)
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<string | null>(null)
  const send = async () => {
    setBusy(true)
    setError(null)
    try {
      await api('/request-password-reset', { email: current.user.email, redirectTo: pageURL('reset-password') })
      setSent(true)
    } catch (e) {
      setError((e as Error).message)
    } finally {
      setBusy(false)
    }
  }
  return (
    <Stack gap="sm" data-testid="no-password">
      <Text>Your account has no password: you sign in another way (a linked account, a passkey or a link by email).</Text>
      {config.forgotPassword ? (
        sent ? (
          <Text role="status" data-testid="set-password-sent">
            We sent a link to {current.user.email}. Open it to choose your password.
          </Text>
        ) : (
          <>
            <Text size="sm">To add one, we email you a link where you choose it.</Text>
            <FocusedAlert message={error} />
            <Button onClick={() => void send()} loading={busy} style={{ alignSelf: 'flex-start' }}>
              Email me a link to set a password
            </Button>
          </>
        )
      ) : (
        <Text size="sm">Ask your administrator to send you a link to set one.</Text>
      )}
    </Stack>
  )
}
