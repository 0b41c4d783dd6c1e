import { Button, Checkbox, PasswordInput, Stack, Text } from '@mantine/core'
import { type FormEvent, useEffect, useRef, useState } from 'react'
import { api, pageURL, type PublicConfig } from '../api'
import { errorsOf, type FormErrors, invalid, NO_ERRORS } from '../errors'
import { Layout } from '../Layout'
import type { PageProps } from '../page-props'
import { type AccountSession, AccountPage, FocusedAlert, useFocusFirstInvalid } from './common'
import type { LinkedAccount } from './Overview'

/**
 * "Delete your account" (`/ui/account/delete`, when `user.deleteUser.enabled`): better-auth's
 * POST /delete-user, with the password when the account has one; with
 * `user.deleteUser.sendDeleteAccountVerification` a link is mailed instead, whose
 * `/delete-user/callback` comes back here with `?deleted=1`.
 */
export function AccountDeletePage({ config }: PageProps) {
  if (new URLSearchParams(location.search).has('deleted')) {
    return (
      <Layout config={config} title="Account deleted">
        <Text data-testid="account-deleted">Your {config.appName} account is deleted. You are signed out everywhere.</Text>
      </Layout>
    )
  }
  return (
    <AccountPage config={config} title="Delete your account">
      {(current) => <DeleteBody config={config} current={current} />}
    </AccountPage>
  )
}

function DeleteBody({ config, current }: { config: PublicConfig; current: AccountSession }) {
  const [hasPassword, setHasPassword] = useState<boolean | null>(null)
  const [errors, setErrors] = useState<FormErrors>(NO_ERRORS)
  const [busy, setBusy] = useState(false)
  const [sure, setSure] = useState(false)
  const [sent, setSent] = useState(false)
  const form = useRef<HTMLFormElement>(null)
  const focusInvalid = useFocusFirstInvalid(form)
  useEffect(() => {
    api<LinkedAccount[]>('/list-accounts')
      .then((accounts) => setHasPassword(accounts.some((a) => a.providerId === 'credential')))
      .catch(() => setHasPassword(true))
  }, [])

  if (!config.deleteUser) return <Text>Deleting your account here is not enabled: ask your administrator.</Text>
  if (hasPassword === null) return null
  if (sent) {
    return (
      <Text role="status" data-testid="delete-link-sent">
        We sent a link to {current.user.email}. Open it to delete your account.
      </Text>
    )
  }

  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault()
    const password = String(new FormData(event.currentTarget).get('password') ?? '')
    if (hasPassword && !password) {
      setErrors({ fields: { password: 'Enter your password' }, form: null })
      focusInvalid()
      return
    }
    setBusy(true)
    setErrors(NO_ERRORS)
    try {
      const answer = await api<{ message: string }>('/delete-user', {
        ...(hasPassword ? { password } : {}),
        callbackURL: pageURL('account/delete', { deleted: '1' }),
      })
      if (answer.message === 'User deleted') location.assign(pageURL('account/delete', { deleted: '1' }))
      else setSent(true)
    } catch (e) {
      setErrors(errorsOf(e))
      focusInvalid()
    } finally {
      setBusy(false)
    }
  }

  return (
    <Stack gap="md">
      <Text>
        Deleting your account removes it from {config.appName} and every app that signs you in through it: your sessions, passkeys, app
        passwords and linked accounts go with it. This cannot be undone.
      </Text>
      <FocusedAlert message={errors.form} />
      <form ref={form} onSubmit={(e) => void submit(e)} noValidate aria-label="Delete your account">
        <Stack gap="sm">
          {hasPassword ? (
            <PasswordInput
              name="password"
              label="Your password"
              autoComplete="current-password"
              required
              error={errors.fields.password}
              aria-invalid={invalid(errors, 'password')}
            />
          ) : null}
          <Checkbox label="I understand my account cannot be restored" checked={sure} onChange={(e) => setSure(e.currentTarget.checked)} />
          <Button type="submit" color="red.9" loading={busy} disabled={!sure} style={{ alignSelf: 'flex-start' }}>
            Delete my account
          </Button>
        </Stack>
      </form>
    </Stack>
  )
}
