import { Button, Checkbox, SegmentedControl, Stack, Text, TextInput } from '@mantine/core'
import { type FormEvent, useState } from 'react'
import { api } from '../api'
import { useFocusOnInvalid, errorsOf, type FormErrors, NO_ERRORS } from '../errors'
import { FormAlert } from '../Layout'

export type SecondFactor = 'totp' | 'otp' | 'backup'

const FACTOR_LABELS: Record<SecondFactor, string> = { totp: 'Authenticator app', otp: 'Code by email', backup: 'Backup code' }
const VERIFY_PATH: Record<SecondFactor, string> = {
  totp: '/two-factor/verify-totp',
  otp: '/two-factor/verify-otp',
  backup: '/two-factor/verify-backup-code',
}

/** The step after the password when the account has a second factor (two_factor cookie set by the sign-in). */
export function SecondFactorStep({ methods, onDone }: { methods: SecondFactor[]; onDone: (who: string | null) => void }) {
  const [method, setMethod] = useState<SecondFactor>(methods[0] ?? 'backup')
  const [busy, setBusy] = useState(false)
  const [sent, setSent] = useState(false)
  const [errors, setErrors] = useState<FormErrors>(NO_ERRORS)
  useFocusOnInvalid(errors)

  const sendCode = async () => {
    setErrors(NO_ERRORS)
    try {
      await api('/two-factor/send-otp', {})
      setSent(true)
    } catch (e) {
      setErrors(errorsOf(e))
    }
  }

  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault()
    const form = new FormData(event.currentTarget)
    const code = String(form.get('code') ?? '').trim()
    if (!code) return setErrors({ fields: { code: 'Enter the code' }, form: null })
    setBusy(true)
    setErrors(NO_ERRORS)
    try {
      const answer = await api<{ user?: { name?: string; email?: string } }>(VERIFY_PATH[method], {
        code,
        trustDevice: form.get('trustDevice') === 'on',
      })
      onDone(answer.user?.name || answer.user?.email || null)
    } catch (e) {
      setErrors(errorsOf(e))
    } finally {
      setBusy(false)
    }
  }

  const hint: Record<SecondFactor, string> = {
    totp: 'Enter the 6-digit code your authenticator app shows.',
    otp: sent ? 'We sent a code to your email address. Enter it below.' : 'We can send a one-time code to your email address.',
    backup: 'Enter one of the backup codes you saved when you set up two-step verification.',
  }
  return (
    <Stack gap="sm">
      {methods.length > 1 ? (
        <SegmentedControl
          aria-label="Verification method"
          value={method}
          onChange={(v) => {
            setMethod(v as SecondFactor)
            setErrors(NO_ERRORS)
          }}
          data={methods.map((m) => ({ value: m, label: FACTOR_LABELS[m] }))}
          fullWidth
        />
      ) : null}
      <Text size="sm">{hint[method]}</Text>
      <FormAlert message={errors.form} />
      {method === 'otp' && !sent ? (
        <Button variant="default" onClick={() => void sendCode()}>
          Send a code
        </Button>
      ) : null}
      <form onSubmit={submit} noValidate aria-label="Second factor">
        <Stack gap="sm">
          <TextInput
            key={method}
            name="code"
            label={method === 'backup' ? 'Backup code' : 'Verification code'}
            autoComplete="one-time-code"
            inputMode={method === 'backup' ? 'text' : 'numeric'}
            required
            error={errors.fields.code}
            autoFocus
          />
          <Checkbox name="trustDevice" label="Trust this browser (skip this step next time)" />
          <Button type="submit" loading={busy} fullWidth>
            Verify
          </Button>
        </Stack>
      </form>
    </Stack>
  )
}
