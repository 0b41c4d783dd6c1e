import { Badge, Button, Card, Code, Group, Select, Stack, Text, Textarea, TextInput } from '@mantine/core'
import { useState } from 'react'
import type { SamlServiceProviderView } from '../../../../server/features/saml/panel-contract'
import { Allowed, Editable } from '../../access'
import { useOp, useOpMutation, useRereading } from '../../api'
import { GroupNameProblems } from '../groups/GroupNameProblems'
import { ConfirmButton, ErrorNotice, Loading, PageHeader } from '../../components/common'
import { useFieldDraft } from '../../object-save'

type Format = 'email' | 'persistent' | 'persistent-shared' | 'unspecified'
const FORMATS = [
  { value: 'email', label: 'Email address' },
  { value: 'persistent', label: 'Persistent (pairwise: its own per app)' },
  { value: 'persistent-shared', label: 'Persistent, shared (the user id)' },
  { value: 'unspecified', label: 'Unspecified (email)' },
]
const groupsOf = (text: string): string[] =>
  text
    .split(',')
    .map((g) => g.trim())
    .filter(Boolean)

/** Paste or fetch an SP's metadata, then register it. */
function AddServiceProvider() {
  const [metadataXml, setMetadataXml] = useState('')
  const [url, setUrl] = useState('')
  const [name, setName] = useState('')
  const [format, setFormat] = useState<Format>('email')
  const [groups, setGroups] = useState('')
  const fetchMetadata = useOpMutation('saml.fetchMetadata')
  const create = useOpMutation('saml.createServiceProvider')
  return (
    <Card withBorder>
      <Stack gap="sm">
        <Text fw={600}>Add a SAML application</Text>
        <Group align="flex-end">
          <TextInput
            label="Metadata URL"
            value={url}
            onChange={(e) => setUrl(e.currentTarget.value)}
            style={{ flex: 1 }}
            data-testid="saml-metadata-url"
          />
          <Allowed op="saml.fetchMetadata">
            <Button
              variant="light"
              loading={fetchMetadata.isPending}
              disabled={!url}
              onClick={() => fetchMetadata.mutate({ url }, { onSuccess: (answer) => setMetadataXml(answer.metadataXml) })}
            >
              Fetch
            </Button>
          </Allowed>
        </Group>
        <Textarea
          label="Metadata XML"
          description="Paste the application's SAML metadata, or fetch it from its URL."
          autosize
          minRows={4}
          maxRows={12}
          value={metadataXml}
          onChange={(e) => setMetadataXml(e.currentTarget.value)}
          data-testid="saml-metadata-xml"
        />
        <Group grow>
          <TextInput label="Name" value={name} onChange={(e) => setName(e.currentTarget.value)} data-testid="saml-name" />
          <Select label="NameID" data={FORMATS} value={format} onChange={(v) => v && setFormat(v as Format)} allowDeselect={false} />
          <TextInput
            label="Allowed groups"
            description="Comma-separated; empty: everyone"
            value={groups}
            onChange={(e) => setGroups(e.currentTarget.value)}
          />
        </Group>
        <ErrorNotice error={fetchMetadata.error ?? create.error} />
        <Group justify="flex-end">
          <Button
            loading={create.isPending}
            disabled={!metadataXml.trim()}
            data-testid="saml-create"
            onClick={() =>
              create.mutate(
                { metadataXml, ...(name.trim() ? { name: name.trim() } : {}), nameIdFormat: format, allowedGroups: groupsOf(groups) },
                {
                  onSuccess: () => {
                    setMetadataXml('')
                    setUrl('')
                    setName('')
                    setGroups('')
                  },
                },
              )
            }
          >
            Add
          </Button>
        </Group>
      </Stack>
    </Card>
  )
}

function ServiceProviderCard({ sp }: { sp: SamlServiceProviderView }) {
  const update = useOpMutation('saml.updateServiceProvider')
  const rereading = useRereading('saml.serviceProviders')
  const remove = useOpMutation('saml.deleteServiceProvider')
  // Only the fields this admin changed are sent, each with the value it was read at (a change by
  // another admin since is refused and shown beside the field).
  const name = useFieldDraft(sp.name)
  const groups = useFieldDraft(sp.allowedGroups.join(', '))
  const save = () => {
    const patch: { name?: string; allowedGroups?: string[] } = {}
    const base: Record<string, unknown> = {}
    if (name.value !== name.read) {
      patch.name = name.value
      base.name = name.read
    }
    const chosen = groupsOf(groups.value)
    const readGroups = groupsOf(groups.read)
    if (chosen.join() !== readGroups.join()) {
      patch.allowedGroups = chosen
      base.allowedGroups = readGroups
    }
    if (Object.keys(patch).length === 0) return
    update.mutate(
      { id: sp.id, ...patch, base },
      {
        onSuccess: () => {
          name.reset()
          groups.reset()
        },
      },
    )
  }
  const fromConfig = sp.source === 'config'
  return (
    <Card withBorder data-testid={`saml-sp-${sp.id}`}>
      <Stack gap="xs">
        <Group justify="space-between">
          <Group gap="xs">
            <Text fw={600}>{sp.name}</Text>
            {fromConfig ? <Badge variant="light">config file</Badge> : null}
            {sp.authnRequestsSigned ? <Badge variant="light">signed requests</Badge> : null}
          </Group>
          {fromConfig ? null : (
            <Allowed op="saml.deleteServiceProvider" hide>
              <ConfirmButton
                label="Delete"
                title={`Delete ${sp.name}?`}
                message="Its users can no longer sign in to it through Gatehouse."
                confirmLabel="Delete"
                loading={remove.isPending}
                onConfirm={() => remove.mutate({ id: sp.id })}
              />
            </Allowed>
          )}
        </Group>
        <Text size="sm">
          entityID: <Code>{sp.entityId}</Code>
        </Text>
        <Text size="sm">
          ACS:{' '}
          {sp.acsUrls.map((u) => (
            <Code key={u}>{u}</Code>
          ))}
        </Text>
        {fromConfig ? (
          <Text size="sm">
            NameID {sp.nameIdFormat}; allowed groups: {sp.allowedGroups.join(', ') || 'everyone'}
          </Text>
        ) : (
          <Editable op="saml.updateServiceProvider">
            <Group align="flex-start" grow>
              <TextInput
                label="Name"
                value={name.value}
                onChange={(e) => name.set(e.currentTarget.value)}
                error={update.error?.messageFor('name')}
                data-testid={`saml-edit-name-${sp.id}`}
              />
              <Select
                label="NameID"
                data={FORMATS}
                value={sp.nameIdFormat}
                allowDeselect={false}
                disabled={update.isPending || rereading}
                error={update.error?.messageFor('nameIdFormat')}
                onChange={(v) => v && update.mutate({ id: sp.id, nameIdFormat: v as Format, base: { nameIdFormat: sp.nameIdFormat } })}
              />
              <TextInput
                label="Allowed groups"
                value={groups.value}
                onChange={(e) => groups.set(e.currentTarget.value)}
                error={update.error?.messageFor('allowedGroups')}
                data-testid={`saml-edit-groups-${sp.id}`}
              />
              <Button variant="light" mt="xl" loading={update.isPending} onClick={save} data-testid={`saml-edit-save-${sp.id}`}>
                Save
              </Button>
            </Group>
          </Editable>
        )}
        <GroupNameProblems where={(at) => at === `SAML app "${sp.name}"`} testId={`group-names-saml-${sp.id}`} />
        <ErrorNotice error={update.error ?? remove.error} />
      </Stack>
    </Card>
  )
}

/** "SAML apps": the service providers that sign their users in through Gatehouse over SAML 2.0. */
export default function SamlApps() {
  const list = useOp('saml.serviceProviders', {})
  return (
    <>
      <PageHeader title="SAML apps" description="Applications that sign their users in through Gatehouse over SAML 2.0." />
      {list.isLoading ? <Loading /> : null}
      <ErrorNotice error={list.error} onRetry={() => void list.refetch()} />
      {list.data ? (
        <Stack>
          <Text size="sm">
            IdP metadata (entityID): <Code data-testid="saml-idp-metadata">{list.data.metadataUrl}</Code>
            {list.data.enabled ? null : ' — SAML is off (Settings → Sign-in).'}
          </Text>
          <Allowed op="saml.createServiceProvider" hide>
            <AddServiceProvider />
          </Allowed>
          {list.data.serviceProviders.map((sp) => (
            <ServiceProviderCard key={sp.id} sp={sp} />
          ))}
        </Stack>
      ) : null}
    </>
  )
}
