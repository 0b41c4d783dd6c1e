import { Anchor, Button, Checkbox, Divider, Group, PasswordInput, Stack, Text, TextInput } from '@mantine/core'
import { startAuthentication } from '@simplewebauthn/browser'
import { type FormEvent, useEffect, useState } from 'react'
import type { PageProps } from '../page-props'
import { ApiError, api, pageURL } from '../api'
import { useFocusOnInvalid, errorsOf, type FormErrors, invalid, NO_ERRORS } from '../errors'
import { FormAlert, Layout } from '../Layout'
import { enrolmentStep } from '../enrolment'
import { forwardAuthReturnTo, returnToParam } from '../return-to'
import { type SecondFactor, SecondFactorStep } from './SecondFactorStep'

interface SignInAnswer {
  twoFactorRedirect?: boolean
  twoFactorMethods?: string[]
  user?: { name?: string; email?: string }
}

/** A returnTo to an app behind forward auth, once the server accepted its host (null: none or refused). */
export function useForwardAuthApp(): { url: string; app: string } | null {
  const [accepted, setAccepted] = useState<{ url: string; app: string } | null>(null)
  useEffect(() => {
    void forwardAuthReturnTo(new URLSearchParams(location.search).get('returnTo')).then(setAccepted)
  }, [])
  return accepted
}

/** Where an accepted returnTo goes once signed in: through the enrolment step first when the person must enrol (issue 49 §10). */
function goOn(target: string, twoFactor: boolean): void {
  void enrolmentStep(target, twoFactor).then((step) => location.assign(step ?? target))
}

/**
 * Signed in: go to the accepted returnTo (Gatehouse's own, or a forward-auth app's), through the
 * two-factor enrolment step first when the person must enrol (issue 49 §10); else show the done state.
 */
function useFinish(forwardApp: { url: string } | null, twoFactor: boolean): [{ who: string | null } | null, (who: string | null) => void] {
  const [done, setDone] = useState<{ who: string | null } | null>(null)
  const finish = (who: string | null) => {
    const target = returnToParam() ?? forwardApp?.url
    if (target) return goOn(target, twoFactor)
    setDone({ who })
  }
  return [done, finish]
}

/**
 * Where a sign-in by redirect (the mailed link, a social or generic OAuth provider) comes back to:
 * this page's done state with the returnTo as given, so it goes on the way a password sign-in does
 * (`useFinish`: the enrolment step when due, then returnTo) instead of straight to returnTo.
 */
export const signedInCallbackURL = (): string => {
  const value = new URLSearchParams(location.search).get('returnTo')
  return pageURL('sign-in', { done: '1', ...(value ? { returnTo: value } : {}) })
}

/**
 * `?done=1&returnTo=`: back from a sign-in by redirect (signedInCallbackURL). True while the
 * returnTo is checked and the page goes on with it; false once there is nothing to go on to (the
 * done state shows).
 */
function useGoingOn(twoFactor: boolean): boolean {
  const [going, setGoing] = useState(() => {
    const query = new URLSearchParams(location.search)
    return query.has('done') && query.has('returnTo')
  })
  useEffect(() => {
    if (!going) return
    const value = new URLSearchParams(location.search).get('returnTo')
    void (async () => {
      const target = returnToParam() ?? (await forwardAuthReturnTo(value))?.url
      if (target) goOn(target, twoFactor)
      else setGoing(false)
    })()
  }, [going, twoFactor])
  return going
}

/** The signed-in state's Sign out: ends the session, then the sign-out page's signed-out state. */
async function signOutHere(): Promise<void> {
  try {
    await api('/sign-out', {})
  } catch {
    // No session any more is what was asked for.
  }
  location.assign(pageURL('sign-out', { done: '1' }))
}

/** The factors a challenge offers, as the page offers them (a backup code always). */
const offeredFactors = (methods: readonly string[]): SecondFactor[] => [
  ...methods.filter((m): m is SecondFactor => m === 'totp' || m === 'otp'),
  'backup',
]

/**
 * `?step=two-factor&methods=totp,otp`: a sign-in by redirect (a provider's callback, a followed
 * link) was held for a second factor; its challenge cookie is set, so the page starts there.
 */
function initialStep(): { step: 'password' | 'second-factor'; methods: SecondFactor[] } {
  const query = new URLSearchParams(location.search)
  if (query.get('step') !== 'two-factor') return { step: 'password', methods: [] }
  return { step: 'second-factor', methods: offeredFactors((query.get('methods') || 'totp').split(',')) }
}

/** The page's answer once signed in (or opened while signed in): who, and a Sign out button. */
function SignedIn({ config, who }: { config: PageProps['config']; who: string | null }) {
  return (
    <Layout config={config} title="You are signed in">
      <Text data-testid="signed-in">
        {who ? `Signed in as ${who}.` : 'You are signed in.'} You can close this page or return to the application.
      </Text>
      <Button variant="default" fullWidth data-testid="sign-out-button" onClick={() => void signOutHere()}>
        Sign out
      </Button>
    </Layout>
  )
}

/** Email (or username) and password. */
function PasswordForm({
  label,
  username,
  busy,
  errors,
  onSubmit,
}: {
  label: string
  username: boolean
  busy: boolean
  errors: FormErrors
  onSubmit: (event: FormEvent<HTMLFormElement>) => void
}) {
  return (
    <form onSubmit={onSubmit} noValidate aria-label="Sign in with password">
      <Stack gap="sm">
        <TextInput
          name="identifier"
          label={label}
          autoComplete={username ? 'username' : 'email'}
          required
          error={errors.fields.identifier}
          autoFocus
        />
        <PasswordInput
          name="password"
          label="Password"
          autoComplete="current-password"
          required
          error={errors.fields.password}
          aria-invalid={invalid(errors, 'password')}
        />
        <Checkbox name="rememberMe" label="Keep me signed in" defaultChecked />
        <Button type="submit" loading={busy} fullWidth>
          Sign in
        </Button>
      </Stack>
    </form>
  )
}

/** The other ways in that this Gatehouse offers: passkey, social providers, a mailed link or code. */
function OtherMethods({
  config,
  busy,
  onPasskey,
  onSocial,
  onByEmail,
}: {
  config: PageProps['config']
  busy: boolean
  onPasskey: () => void
  onSocial: (provider: string) => void
  onByEmail: (kind: 'link' | 'code') => void
}) {
  return (
    <Stack gap="xs">
      {config.passkey ? (
        <Button variant="default" onClick={onPasskey} disabled={busy} fullWidth>
          Sign in with a passkey
        </Button>
      ) : null}
      {config.socialProviders.map((p) => (
        <Button key={p.id} variant="default" onClick={() => onSocial(p.id)} fullWidth>
          Continue with {p.name}
        </Button>
      ))}
      {config.magicLink ? (
        <Button variant="default" onClick={() => onByEmail('link')} fullWidth>
          Email me a link
        </Button>
      ) : null}
      {config.emailOTP ? (
        <Button variant="default" onClick={() => onByEmail('code')} fullWidth>
          Email me a code
        </Button>
      ) : null}
    </Stack>
  )
}

/** A social sign-in leaves for the provider; it comes back to returnTo or this page's done state. */
async function startSocialSignIn(provider: string): Promise<void> {
  const answer = await api<{ url?: string }>('/sign-in/social', {
    provider,
    callbackURL: signedInCallbackURL(),
    errorCallbackURL: pageURL('error'),
  })
  if (answer.url) location.assign(answer.url)
}

/** A discoverable passkey: the browser picks the credential. */
async function passkeySignIn(): Promise<SignInAnswer> {
  const optionsJSON = await api<Parameters<typeof startAuthentication>[0]['optionsJSON']>('/passkey/generate-authenticate-options')
  const response = await startAuthentication({ optionsJSON })
  return await api<SignInAnswer>('/passkey/verify-authentication', { response })
}

export function SignInPage({ config }: PageProps) {
  const forwardApp = useForwardAuthApp()
  const [done, finish] = useFinish(forwardApp, config.twoFactor)
  const goingOn = useGoingOn(config.twoFactor)
  const [initial] = useState(initialStep)
  const [step, setStep] = useState<'password' | 'second-factor'>(initial.step)
  const [methods, setMethods] = useState<SecondFactor[]>(initial.methods)
  const [busy, setBusy] = useState(false)
  const [errors, setErrors] = useState<FormErrors>(NO_ERRORS)
  useFocusOnInvalid(errors)
  const [byEmail, setByEmail] = useState<'link' | 'code' | null>(null)
  const alreadyDone = new URLSearchParams(location.search).has('done')
  const [session, setSession] = useState<{ who: string } | null>(null)
  // Opened while signed in, with nowhere to return to: the signed-in state, not a form. (With a
  // returnTo the form stays: the app sent the browser here because this session did not do for it.)
  useEffect(() => {
    const query = new URLSearchParams(location.search)
    if (query.has('returnTo') || query.has('step')) return
    api<{ user: { name?: string; email: string } } | null>('/get-session')
      .then((answer) => {
        if (answer?.user) setSession({ who: answer.user.name || answer.user.email })
      })
      .catch(() => {})
  }, [])

  if (goingOn) {
    return (
      <Layout config={config} title="Signing you in">
        <Text data-testid="going-on">Signed in. Taking you on…</Text>
      </Layout>
    )
  }

  if (done || alreadyDone || session) {
    return <SignedIn config={config} who={done?.who ?? session?.who ?? null} />
  }

  if (step === 'second-factor') {
    return (
      <Layout config={config} title="Two-step verification">
        <ForAppNote app={forwardApp?.app} />
        <SecondFactorStep methods={methods} onDone={(who) => finish(who)} />
      </Layout>
    )
  }

  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault()
    const form = new FormData(event.currentTarget)
    const identifier = String(form.get('identifier') ?? '').trim()
    const password = String(form.get('password') ?? '')
    const rememberMe = form.get('rememberMe') === 'on'
    const missing: Record<string, string> = {}
    if (!identifier) missing.identifier = config.username ? 'Enter your email or username' : 'Enter your email'
    if (!password) missing.password = 'Enter your password'
    if (Object.keys(missing).length) return setErrors({ fields: missing, form: null })
    setBusy(true)
    setErrors(NO_ERRORS)
    try {
      const byEmail = identifier.includes('@') || !config.username
      const answer = await api<SignInAnswer>(byEmail ? '/sign-in/email' : '/sign-in/username', {
        ...(byEmail ? { email: identifier } : { username: identifier }),
        password,
        rememberMe,
      })
      if (answer.twoFactorRedirect) {
        setMethods(offeredFactors(answer.twoFactorMethods ?? ['totp']))
        setStep('second-factor')
      } else {
        finish(answer.user?.name || answer.user?.email || null)
      }
    } catch (e) {
      setErrors(errorsOf(e, { email: 'identifier', username: 'identifier' }))
    } finally {
      setBusy(false)
    }
  }

  const social = async (provider: string) => {
    setErrors(NO_ERRORS)
    try {
      await startSocialSignIn(provider)
    } catch (e) {
      setErrors(errorsOf(e))
    }
  }

  const passkey = async () => {
    setErrors(NO_ERRORS)
    setBusy(true)
    try {
      const answer = await passkeySignIn()
      finish(answer.user?.name || answer.user?.email || null)
    } catch (e) {
      // The browser's own refusal (cancelled, timed out) is not an API error.
      setErrors(
        e instanceof ApiError ? errorsOf(e) : { fields: {}, form: 'The passkey sign-in was cancelled or did not complete. Try again.' },
      )
    } finally {
      setBusy(false)
    }
  }

  const idLabel = config.username ? 'Email or username' : 'Email'
  if (byEmail) {
    return (
      <Layout config={config} title={`Sign in to ${config.appName}`}>
        <ForAppNote app={forwardApp?.app} />
        <EmailSignIn
          kind={byEmail}
          onSecondFactor={(m) => {
            setMethods(offeredFactors(m))
            setStep('second-factor')
          }}
          onDone={finish}
          onBack={() => setByEmail(null)}
        />
      </Layout>
    )
  }
  return (
    <Layout config={config} title={`Sign in to ${config.appName}`}>
      <ForAppNote app={forwardApp?.app} />
      <FormAlert message={errors.form} />
      {config.emailAndPassword ? (
        <PasswordForm label={idLabel} username={config.username} busy={busy} errors={errors} onSubmit={submit} />
      ) : null}
      {config.passkey || config.socialProviders.length || config.magicLink || config.emailOTP ? (
        <Divider label="or" labelPosition="center" />
      ) : null}
      <OtherMethods
        config={config}
        busy={busy}
        onPasskey={() => void passkey()}
        onSocial={(id) => void social(id)}
        onByEmail={setByEmail}
      />
      <Group justify="space-between" gap="xs">
        {config.forgotPassword !== false && config.emailAndPassword ? (
          <Anchor href={pageURL('forgot-password', keepReturnTo())} size="sm">
            Forgot your password?
          </Anchor>
        ) : (
          <span />
        )}
        {config.signUp ? (
          <Anchor href={pageURL('sign-up', keepReturnTo())} size="sm">
            Create an account
          </Anchor>
        ) : null}
      </Group>
    </Layout>
  )
}

/**
 * Sign-in by email: "Email me a link" (POST /sign-in/magic-link; the mailed link signs in and comes
 * back to returnTo, or to this page's done state) or "Email me a code" (POST
 * /email-otp/send-verification-otp, then the code step: POST /sign-in/email-otp).
 */
function EmailSignIn({
  kind,
  onSecondFactor,
  onDone,
  onBack,
}: {
  kind: 'link' | 'code'
  onSecondFactor: (methods: string[]) => void
  onDone: (who: string | null) => void
  onBack: () => void
}) {
  const [email, setEmail] = useState('')
  const [sent, setSent] = useState(false)
  const [busy, setBusy] = useState(false)
  const [errors, setErrors] = useState<FormErrors>(NO_ERRORS)
  useFocusOnInvalid(errors)

  const send = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault()
    const address = String(new FormData(event.currentTarget).get('email') ?? '').trim()
    if (!address) return setErrors({ fields: { email: 'Enter your email' }, form: null })
    setBusy(true)
    setErrors(NO_ERRORS)
    try {
      if (kind === 'link') {
        await api('/sign-in/magic-link', {
          email: address,
          callbackURL: signedInCallbackURL(),
          errorCallbackURL: pageURL('error'),
        })
      } else {
        await api('/email-otp/send-verification-otp', { email: address, type: 'sign-in' })
      }
      setEmail(address)
      setSent(true)
    } catch (e) {
      setErrors(errorsOf(e))
    } finally {
      setBusy(false)
    }
  }

  const verify = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault()
    const otp = String(new FormData(event.currentTarget).get('code') ?? '').trim()
    if (!otp) return setErrors({ fields: { code: 'Enter the code' }, form: null })
    setBusy(true)
    setErrors(NO_ERRORS)
    try {
      const answer = await api<SignInAnswer>('/sign-in/email-otp', { email, otp })
      if (answer.twoFactorRedirect) onSecondFactor(answer.twoFactorMethods ?? ['totp'])
      else onDone(answer.user?.name || answer.user?.email || null)
    } catch (e) {
      setErrors(errorsOf(e, { otp: 'code' }))
    } finally {
      setBusy(false)
    }
  }

  const back = (
    <Anchor component="button" type="button" size="sm" onClick={onBack}>
      Sign in another way
    </Anchor>
  )
  if (sent && kind === 'link') {
    return (
      <Stack gap="sm">
        <Text data-testid="link-sent">
          We sent a sign-in link to <strong>{email}</strong>. Open it in this browser to continue.
        </Text>
        {back}
      </Stack>
    )
  }
  if (sent) {
    return (
      <Stack gap="sm">
        <Text size="sm" data-testid="code-sent">
          We sent a code to <strong>{email}</strong>. Enter it below.
        </Text>
        <FormAlert message={errors.form} />
        <form onSubmit={verify} noValidate aria-label="Sign in with an email code">
          <Stack gap="sm">
            <TextInput
              name="code"
              label="Code from the email"
              autoComplete="one-time-code"
              inputMode="numeric"
              required
              error={errors.fields.code}
              autoFocus
            />
            <Button type="submit" loading={busy} fullWidth>
              Sign in
            </Button>
          </Stack>
        </form>
        {back}
      </Stack>
    )
  }
  return (
    <Stack gap="sm">
      <Text size="sm">{kind === 'link' ? 'We will email you a link that signs you in.' : 'We will email you a code to sign in with.'}</Text>
      <FormAlert message={errors.form} />
      <form onSubmit={send} noValidate aria-label={kind === 'link' ? 'Email me a sign-in link' : 'Email me a sign-in code'}>
        <Stack gap="sm">
          <TextInput name="email" type="email" label="Email" autoComplete="email" required error={errors.fields.email} autoFocus />
          <Button type="submit" loading={busy} fullWidth>
            {kind === 'link' ? 'Send the link' : 'Send the code'}
          </Button>
        </Stack>
      </form>
      {back}
    </Stack>
  )
}

/** Which app the person signs in for, when a forward-auth returnTo was accepted. */
function ForAppNote({ app }: { app: string | undefined }) {
  if (!app) return null
  return (
    <Text size="sm" data-testid="for-app">
      to continue to <strong>{app}</strong>
    </Text>
  )
}

/** The returnTo query of this page, to carry to the next one. */
export const keepReturnTo = (): Record<string, string> => {
  const value = returnToParam()
  return value ? { returnTo: value } : {}
}
