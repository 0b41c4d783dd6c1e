import { Anchor, Button, PasswordInput, Stack, Text, TextInput } from '@mantine/core'
import { type FormEvent, useState } from 'react'
import type { PageProps } from '../page-props'
import { ApiError, api, pageURL } from '../api'
import { useFocusOnInvalid, errorsOf, type FormErrors, invalid, NO_ERRORS } from '../errors'
import { FormAlert, Layout } from '../Layout'
import { keepReturnTo } from './SignIn'

/**
 * The email field and button that ask for a reset mail, whose link (GET /reset-password/:token)
 * leads back to the reset page with ?token=. The forgot-password page and a reset link that no
 * longer works both use it.
 */
function RequestResetForm({ label, button }: { label: string; button: string }) {
  const [busy, setBusy] = useState(false)
  const [errors, setErrors] = useState<FormErrors>(NO_ERRORS)
  useFocusOnInvalid(errors)
  const [answer, setAnswer] = useState<string | null>(null)

  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault()
    const email = String(new FormData(event.currentTarget).get('email') ?? '').trim()
    if (!email) return setErrors({ fields: { email: 'Enter your email' }, form: null })
    setBusy(true)
    setErrors(NO_ERRORS)
    try {
      const result = await api<{ message?: string }>('/request-password-reset', {
        email,
        redirectTo: pageURL('reset-password', keepReturnTo()),
      })
      setAnswer(result.message ?? 'Check your email for the reset link.')
    } catch (e) {
      setErrors(errorsOf(e))
    } finally {
      setBusy(false)
    }
  }

  if (answer) {
    return (
      <Text role="status" data-testid="reset-requested">
        {answer}
      </Text>
    )
  }
  return (
    <>
      <FormAlert message={errors.form} />
      <form onSubmit={submit} noValidate aria-label={label}>
        <Stack gap="sm">
          <TextInput name="email" type="email" label="Email" autoComplete="email" required error={errors.fields.email} autoFocus />
          <Button type="submit" loading={busy} fullWidth>
            {button}
          </Button>
        </Stack>
      </form>
    </>
  )
}

/** Asks for a reset mail. */
export function ForgotPasswordPage({ config }: PageProps) {
  return (
    <Layout config={config} title="Reset your password">
      <Text size="sm">Enter the email address of your account and we will send you a link to choose a new password.</Text>
      <RequestResetForm label="Reset your password" button="Send reset link" />
      <Anchor href={pageURL('sign-in', keepReturnTo())} size="sm">
        Back to sign-in
      </Anchor>
    </Layout>
  )
}

/** A reset link that is invalid, spent or expired: says so and offers to send a new one right here. */
function BadResetLink({ config }: PageProps) {
  return (
    <Layout config={config} title="This link does not work">
      <FormAlert message="The reset link is invalid or has expired." />
      <Text size="sm">Enter the email address of your account and we will send you a new link.</Text>
      <RequestResetForm label="Send a new reset link" button="Send a new link" />
      <Anchor href={pageURL('sign-in', keepReturnTo())} size="sm">
        Back to sign-in
      </Anchor>
    </Layout>
  )
}

/** The target of the reset mail's link: `?token=` when the token is valid, `?error=INVALID_TOKEN` otherwise. */
export function ResetPasswordPage({ config }: PageProps) {
  const params = new URLSearchParams(location.search)
  const token = params.get('token')
  const linkError = params.get('error')
  const [busy, setBusy] = useState(false)
  const [errors, setErrors] = useState<FormErrors>(NO_ERRORS)
  useFocusOnInvalid(errors)
  const [done, setDone] = useState(false)
  const [spent, setSpent] = useState(false)

  if (done) {
    return (
      <Layout config={config} title="Password changed">
        <Text role="status" data-testid="password-changed">
          Your password is changed. Sign in with your new password.
        </Text>
        <Anchor href={pageURL('sign-in', keepReturnTo())}>Go to sign-in</Anchor>
      </Layout>
    )
  }
  if (!token || linkError || spent) return <BadResetLink config={config} />

  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault()
    const form = new FormData(event.currentTarget)
    const password = String(form.get('password') ?? '')
    const confirm = String(form.get('confirm') ?? '')
    if (!password) return setErrors({ fields: { password: 'Choose a new password' }, form: null })
    if (password !== confirm) return setErrors({ fields: { confirm: 'The two passwords differ' }, form: null })
    setBusy(true)
    setErrors(NO_ERRORS)
    try {
      await api('/reset-password', { newPassword: password, token })
      setDone(true)
    } catch (e) {
      // The token expired (or was spent) while the page was open: offer a new link.
      if (e instanceof ApiError && e.code === 'INVALID_TOKEN') return setSpent(true)
      setErrors(errorsOf(e, { newPassword: 'password' }))
    } finally {
      setBusy(false)
    }
  }

  return (
    <Layout config={config} title="Choose a new password">
      <FormAlert message={errors.form} />
      <form onSubmit={submit} noValidate aria-label="Choose a new password">
        <Stack gap="sm">
          <PasswordInput
            name="password"
            label="New password"
            autoComplete="new-password"
            required
            error={errors.fields.password}
            aria-invalid={invalid(errors, 'password')}
            autoFocus
          />
          <PasswordInput
            name="confirm"
            label="Repeat the new password"
            autoComplete="new-password"
            required
            error={errors.fields.confirm}
            aria-invalid={invalid(errors, 'confirm')}
          />
          <Button type="submit" loading={busy} fullWidth>
            Change password
          </Button>
        </Stack>
      </form>
    </Layout>
  )
}
