import { Button, Group, Modal, Stack, TextInput } from '@mantine/core'
import { useForm } from '@mantine/form'
import { useDebouncedValue } from '@mantine/hooks'
import { IconPencil } from '@tabler/icons-react'
import { useState } from 'react'
import type { OrganizationView } from '../../../../server/features/organization/panel-contract'
import { Allowed } from '../../access'
import { useOpMutation } from '../../api'
import { showFieldErrors } from '../../components/common'
import { FormDialogButton } from '../../components/FormDialog'
import { done } from '../../components/notify'
import { UserPicker } from '../../components/UserPicker'
import { OrganizationChangeImpact } from '../groups/NameImpact'

/** What a name and a slug must be (the server checks again, and names the field it refuses). */
const nameAndSlug = {
  name: (v: string) => (v.trim() ? null : 'Name is required'),
  slug: (v: string) => (/^[a-z0-9-]+$/.test(v) ? null : 'Lowercase letters, digits and dashes'),
}

/** A slug made from a name: lower case, every run of other characters one dash. */
const slugOf = (name: string) =>
  name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '')

export function CreateOrganization({ opened, onClose }: { opened: boolean; onClose: () => void }) {
  const create = useOpMutation('orgs.create')
  const form = useForm({
    initialValues: { name: '', slug: '', ownerUserId: '' },
    validate: { ...nameAndSlug, ownerUserId: (v) => (v ? null : 'Choose the owner') },
  })
  return (
    <Allowed op="orgs.create" hide>
      <Modal opened={opened} onClose={onClose} title="Create organization" centered>
        <form
          onSubmit={form.onSubmit((values) =>
            create.mutate(values, {
              onSuccess: () => {
                done(`${values.name} created`)
                form.reset()
                onClose()
              },
              onError: (e) => showFieldErrors(e, form.setFieldError, ['name', 'slug', 'ownerUserId'], 'Not created'),
            }),
          )}
        >
          <Stack>
            <TextInput
              label="Name"
              {...form.getInputProps('name')}
              onChange={(e) => {
                const name = e.currentTarget.value
                form.setFieldValue('name', name)
                if (!form.isTouched('slug')) form.setFieldValue('slug', slugOf(name))
              }}
            />
            <TextInput label="Slug" {...form.getInputProps('slug')} />
            <UserPicker
              label="Owner"
              testId="org-owner"
              value={form.values.ownerUserId || null}
              onChange={(v) => form.setFieldValue('ownerUserId', v ?? '')}
              error={form.errors.ownerUserId as string | undefined}
            />
            <Group justify="flex-end">
              <Button type="submit" loading={create.isPending}>
                Create
              </Button>
            </Group>
          </Stack>
        </form>
      </Modal>
    </Allowed>
  )
}

/** Under the slug field: what the new slug would take away, asked once typing pauses. */
function SlugImpact({ organizationId, slug, current }: { organizationId: string; slug: string; current: string }) {
  const [settled] = useDebouncedValue(slug.trim(), 300)
  if (!settled || settled === current) return null
  return <OrganizationChangeImpact change={{ organizationId, slug: settled }} />
}

export function RenameOrganization({ org }: { org: OrganizationView }) {
  const update = useOpMutation('orgs.update')
  const form = useForm({ initialValues: { name: org.name, slug: org.slug }, validate: nameAndSlug })
  // The organization as the dialog read it when opened: only the fields changed are sent, each with
  // its read value (changed by another admin since: 409, shown beside the field).
  const [read, setRead] = useState({ name: org.name, slug: org.slug })
  return (
    <FormDialogButton
      op="orgs.update"
      label="Rename"
      icon={<IconPencil size={14} />}
      testId="org-rename"
      title={`Rename ${org.name}`}
      onOpen={() => {
        form.setValues({ name: org.name, slug: org.slug })
        setRead({ name: org.name, slug: org.slug })
      }}
      onSubmit={(close) =>
        form.onSubmit((values) =>
          update.mutate(
            {
              organizationId: org.id,
              ...(values.name.trim() !== read.name ? { name: values.name.trim() } : {}),
              ...(values.slug !== read.slug ? { slug: values.slug } : {}),
              base: read,
            },
            {
              onSuccess: () => {
                done('Organization renamed')
                close()
              },
              onError: (e) => showFieldErrors(e, form.setFieldError, ['name', 'slug'], 'Not renamed'),
            },
          ),
        )
      }
      saving={update.isPending}
      saveTestId="org-rename-save"
    >
      <TextInput label="Name" data-autofocus {...form.getInputProps('name')} data-testid="org-rename-name" />
      <TextInput label="Slug" {...form.getInputProps('slug')} data-testid="org-rename-slug" />
      <SlugImpact organizationId={org.id} slug={form.values.slug} current={org.slug} />
    </FormDialogButton>
  )
}
