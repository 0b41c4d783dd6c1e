import { Anchor, Button, PasswordInput, Stack, Text, TextInput } from '@mantine/core'
import { type FormEvent, useState } from 'react'
import type { PageProps } from '../page-props'
import { api, pageURL } from '../api'
import { useFocusOnInvalid, errorsOf, type FormErrors, invalid, NO_ERRORS } from '../errors'
import { FormAlert, Layout } from '../Layout'
import { returnToParam } from '../return-to'
import { keepReturnTo } from './SignIn'
import { VERIFIED_MARKER } from './VerifyEmail'

export function SignUpPage({ config }: PageProps) {
  const [busy, setBusy] = useState(false)
  const [errors, setErrors] = useState<FormErrors>(NO_ERRORS)
  useFocusOnInvalid(errors)
  const [checkMail, setCheckMail] = useState<string | null>(null)

  if (!config.signUp) {
    return (
      <Layout config={config} title="Sign-up is closed">
        <Text>New accounts are created by an administrator.</Text>
        <Anchor href={pageURL('sign-in', keepReturnTo())}>Back to sign-in</Anchor>
      </Layout>
    )
  }
  if (checkMail) {
    return (
      <Layout config={config} title="Check your email">
        <Text data-testid="check-mail">
          Your account is created. We sent a link to {checkMail}: follow it to confirm your address, then sign in.
        </Text>
        <Anchor href={pageURL('sign-in', keepReturnTo())}>Go to sign-in</Anchor>
      </Layout>
    )
  }

  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault()
    const form = new FormData(event.currentTarget)
    const name = String(form.get('name') ?? '').trim()
    const email = String(form.get('email') ?? '').trim()
    const password = String(form.get('password') ?? '')
    const missing: Record<string, string> = {}
    if (!name) missing.name = 'Enter your name'
    if (!email) missing.email = 'Enter your email'
    if (!password) missing.password = 'Choose a password'
    if (Object.keys(missing).length) return setErrors({ fields: missing, form: null })
    setBusy(true)
    setErrors(NO_ERRORS)
    try {
      const answer = await api<{ token: string | null }>('/sign-up/email', {
        name,
        email,
        password,
        callbackURL: pageURL('verify-email', { ...keepReturnTo(), ...VERIFIED_MARKER }),
      })
      if (!answer.token) {
        setCheckMail(email)
        return
      }
      const target = returnToParam()
      location.assign(target ?? pageURL('sign-in', { done: '1' }))
    } catch (e) {
      setErrors(errorsOf(e))
    } finally {
      setBusy(false)
    }
  }

  return (
    <Layout config={config} title="Create your account">
      <FormAlert message={errors.form} />
      <form onSubmit={submit} noValidate aria-label="Create your account">
        <Stack gap="sm">
          <TextInput name="name" label="Name" autoComplete="name" required error={errors.fields.name} autoFocus />
          <TextInput
            name="email"
            type="email"
            label="Email"
            autoComplete="email"
            required
            error={errors.fields.email}
            // An administrator's sign-up invitation link (issue 47 §2) names the invited address.
            defaultValue={new URLSearchParams(window.location.search).get('email') ?? undefined}
          />
          <PasswordInput
            name="password"
            label="Password"
            autoComplete="new-password"
            required
            error={errors.fields.password}
            aria-invalid={invalid(errors, 'password')}
          />
          <Button type="submit" loading={busy} fullWidth>
            Create account
          </Button>
        </Stack>
      </form>
      <Text size="sm">
        Already have an account? <Anchor href={pageURL('sign-in', keepReturnTo())}>Sign in</Anchor>
      </Text>
    </Layout>
  )
}
