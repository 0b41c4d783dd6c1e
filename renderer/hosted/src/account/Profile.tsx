import { Avatar, Button, Group, Stack, Text, TextInput, Title } from '@mantine/core'
import { type FormEvent, useRef, useState } from 'react'
import { api, pageURL, type PublicConfig } from '../api'
import { errorsOf, type FormErrors, NO_ERRORS } from '../errors'
import type { PageProps } from '../page-props'
import { type AccountSession, AccountPage, FocusedAlert, useFocusFirstInvalid } from './common'

/**
 * "Profile" (`/ui/account/profile`): name, username (when the username feature is on) and picture
 * URL (POST /update-user); a new email address (POST /change-email: a verified address confirms
 * the change by a link mailed to it, an unverified one by a link to the new address), when
 * `user.changeEmail.enabled`.
 */
export function AccountProfilePage({ config }: PageProps) {
  return (
    <AccountPage config={config} title="Profile">
      {(current, reload) => (
        <Stack gap="lg">
          <ProfileForm config={config} current={current} reload={reload} />
          {config.changeEmail ? <EmailForm current={current} /> : null}
        </Stack>
      )}
    </AccountPage>
  )
}

function ProfileForm({ config, current, reload }: { config: PublicConfig; current: AccountSession; reload: () => void }) {
  const [errors, setErrors] = useState<FormErrors>(NO_ERRORS)
  const [busy, setBusy] = useState(false)
  const [saved, setSaved] = useState(false)
  const form = useRef<HTMLFormElement>(null)
  const focusInvalid = useFocusFirstInvalid(form)
  const user = current.user

  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault()
    const data = new FormData(event.currentTarget)
    const name = String(data.get('name') ?? '').trim()
    const image = String(data.get('image') ?? '').trim()
    const username = String(data.get('username') ?? '').trim()
    const local: Record<string, string> = {}
    if (!name) local.name = 'Enter your name'
    if (image && !/^https?:\/\/\S+$/i.test(image)) local.image = 'Enter an http(s) address, or leave it empty'
    if (Object.keys(local).length > 0) {
      setErrors({ fields: local, form: null })
      focusInvalid()
      return
    }
    // Only what changed: an unchanged username is not checked again.
    const patch: Record<string, unknown> = {}
    if (name !== user.name) patch.name = name
    if (image !== (user.image ?? '')) patch.image = image || null
    if (config.username && username && username !== (user.displayUsername ?? user.username ?? '')) patch.username = username
    setSaved(false)
    if (Object.keys(patch).length === 0) {
      setSaved(true)
      return
    }
    setBusy(true)
    setErrors(NO_ERRORS)
    try {
      await api('/update-user', patch)
      setSaved(true)
      reload()
    } catch (e) {
      setErrors(errorsOf(e))
      focusInvalid()
    } finally {
      setBusy(false)
    }
  }

  return (
    <Stack gap="sm">
      {saved ? (
        <Text role="status" data-testid="profile-saved">
          Your profile is saved.
        </Text>
      ) : null}
      <FocusedAlert message={errors.form} />
      <form ref={form} onSubmit={(e) => void submit(e)} noValidate aria-label="Your profile">
        <Stack gap="sm">
          <Group gap="sm" wrap="nowrap">
            <Avatar src={user.image || null} alt="" radius="xl" size="lg" color="dark" />
            <Text size="sm">How apps that sign you in show you.</Text>
          </Group>
          <TextInput
            name="name"
            label="Name"
            autoComplete="name"
            defaultValue={user.name}
            required
            maxLength={200}
            error={errors.fields.name}
          />
          {config.username ? (
            <TextInput
              name="username"
              label="Username"
              autoComplete="username"
              defaultValue={user.displayUsername ?? user.username ?? ''}
              error={errors.fields.username}
            />
          ) : null}
          <TextInput
            name="image"
            type="url"
            label="Picture"
            description="The address of an image, or empty for none"
            autoComplete="photo"
            defaultValue={user.image ?? ''}
            error={errors.fields.image}
          />
          <Button type="submit" loading={busy} style={{ alignSelf: 'flex-start' }}>
            Save
          </Button>
        </Stack>
      </form>
    </Stack>
  )
}

function EmailForm({ current }: { current: AccountSession }) {
  const [errors, setErrors] = useState<FormErrors>(NO_ERRORS)
  const [busy, setBusy] = useState(false)
  const [sent, setSent] = useState<string | null>(null)
  const form = useRef<HTMLFormElement>(null)
  const focusInvalid = useFocusFirstInvalid(form)

  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault()
    const newEmail = String(new FormData(event.currentTarget).get('newEmail') ?? '').trim()
    if (!/^[^\s@]+@[^\s@]+$/.test(newEmail)) {
      setErrors({ fields: { newEmail: 'Enter an email address' }, form: null })
      focusInvalid()
      return
    }
    setBusy(true)
    setErrors(NO_ERRORS)
    setSent(null)
    try {
      await api('/change-email', { newEmail, callbackURL: pageURL('account/profile') })
      setSent(
        current.user.emailVerified
          ? `To confirm, open the link we sent to ${current.user.email}. Your address changes to ${newEmail} then.`
          : `To confirm, open the link we sent to ${newEmail}. Your address changes then.`,
      )
      form.current?.reset()
    } catch (e) {
      setErrors(errorsOf(e, { email: 'newEmail' }))
      focusInvalid()
    } finally {
      setBusy(false)
    }
  }

  return (
    <Stack gap="sm">
      <Title order={2} size="h4">
        Email address
      </Title>
      <Text size="sm" data-testid="current-email" style={{ overflowWrap: 'anywhere' }}>
        Now: {current.user.email}
      </Text>
      {sent ? (
        <Text role="status" data-testid="email-change-sent">
          {sent}
        </Text>
      ) : null}
      <FocusedAlert message={errors.form} />
      <form ref={form} onSubmit={(e) => void submit(e)} noValidate aria-label="Change your email address">
        <Stack gap="sm">
          <TextInput name="newEmail" type="email" label="New email address" autoComplete="email" required error={errors.fields.newEmail} />
          <Button type="submit" loading={busy} style={{ alignSelf: 'flex-start' }}>
            Change email
          </Button>
        </Stack>
      </form>
    </Stack>
  )
}
