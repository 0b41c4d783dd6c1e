import { Button, Code, Group, Modal, MultiSelect, Stack, Text } from '@mantine/core'
import { useState } from 'react'
import type { OidcClientView } from '../../../../server/features/oidc-provider/panel-contract'
import { Editable } from '../../access'
import { useOp, useOpMutation } from '../../api'
import { ErrorNotice } from '../../components/common'
import { baseOf, ClientFields, changedFields, formOf } from './ClientFields'
import { Copyable, ShownOnceModal } from './Copyable'
import { fillRecipe, type Recipe } from './recipes'

/** A client with its secret, just created or rotated (and the recipe it was made from). */
export interface ShownSecret {
  client: OidcClientView
  clientSecret: string | null
  recipe?: Recipe
}

/**
 * Who may sign in to a client: members of the chosen organizations (and of the teams already set
 * through the panel operation or the CLI, kept as they are). Empty: every Gatehouse user.
 */
export function AccessModal({ client, onClose }: { client: OidcClientView | null; onClose: () => void }) {
  const orgs = useOp('orgs.list', { limit: 500 }, { enabled: client !== null })
  const update = useOpMutation('oidc.updateClient')
  const [chosen, setChosen] = useState<string[] | null>(null)
  if (!client) return null
  const value = chosen ?? client.allowedOrganizations
  const close = () => {
    setChosen(null)
    onClose()
  }
  return (
    <Modal opened onClose={close} title={`Who may sign in to ${client.name}`} centered>
      <Editable op="oidc.updateClient" note>
        <Stack>
          <MultiSelect
            label="Members of these organizations"
            description="Empty: every Gatehouse user. Anyone else is sent back to the application with access_denied."
            data={(orgs.data?.organizations ?? []).map((o) => ({ value: o.id, label: `${o.name} (${o.slug})` }))}
            value={value}
            onChange={setChosen}
            searchable
            error={update.error?.messageFor('allowedOrganizations')}
            data-testid="oidc-allowed-orgs"
          />
          {client.allowedTeams.length > 0 ? (
            <Text size="sm" c="dimmed">
              Members of {client.allowedTeams.length} chosen team(s) are allowed too.
            </Text>
          ) : null}
          <Group justify="flex-end">
            <Button
              loading={update.isPending}
              onClick={() =>
                update.mutate(
                  { clientId: client.clientId, allowedOrganizations: value, base: { allowedOrganizations: client.allowedOrganizations } },
                  { onSuccess: close },
                )
              }
            >
              Save
            </Button>
          </Group>
        </Stack>
      </Editable>
    </Modal>
  )
}

/**
 * A client's settings, edited (issue 50 §4): the registration form's fields, filled with the stored
 * client; only what the admin changed is sent. Its id, kind and secret stay.
 */
export function EditClientModal({ client, onClose }: { client: OidcClientView | null; onClose: () => void }) {
  if (!client) return null
  return <EditClient key={client.clientId} client={client} onClose={onClose} />
}

function EditClient({ client, onClose }: { client: OidcClientView; onClose: () => void }) {
  const update = useOpMutation('oidc.updateClient')
  // The client as this dialog read it: what the admin changed is measured against it, and sent as
  // the base of each changed field (the list refreshing meanwhile must not turn a field another
  // admin changed into one this admin "changed" back).
  const [read] = useState(client)
  const [form, setForm] = useState(() => formOf(read))
  const patch = changedFields(form, read)
  const unchanged = Object.keys(patch).length === 0
  return (
    <Modal opened onClose={onClose} title={`Edit ${client.name}`} size="xl" centered data-testid="oidc-edit">
      <Editable op="oidc.updateClient" note>
        <Stack>
          <Text size="sm">
            Client ID <Code>{client.clientId}</Code>: it and the secret stay, so the application needs no new configuration.
          </Text>
          <ClientFields form={form} onChange={setForm} errorFor={(field) => update.error?.messageFor(field)} prefix="oidc-edit" kindFixed />
          <ErrorNotice error={update.error && !update.error.field ? update.error : null} />
          <Group justify="flex-end">
            <Button variant="default" onClick={onClose}>
              Cancel
            </Button>
            <Button
              loading={update.isPending}
              disabled={unchanged}
              data-testid="oidc-edit-save"
              onClick={() => update.mutate({ clientId: read.clientId, ...patch, base: baseOf(patch, read) }, { onSuccess: onClose })}
            >
              Save
            </Button>
          </Group>
        </Stack>
      </Editable>
    </Modal>
  )
}

/**
 * The secret of a client just created or rotated: shown this once, with copy buttons. Escape and a
 * click outside do not close it (the secret would be lost): only Done does.
 */
export function SecretModal({ shown, issuer, onClose }: { shown: ShownSecret | null; issuer: string; onClose: () => void }) {
  if (!shown) return null
  const values = { issuer, clientId: shown.client.clientId, clientSecret: shown.clientSecret }
  return (
    <ShownOnceModal title={`${shown.client.name}: copy these now`}>
      <Copyable label="Client ID" value={shown.client.clientId} testId="oidc-new-client-id" />
      {shown.clientSecret ? (
        <>
          <Copyable label="Client secret" value={shown.clientSecret} testId="oidc-new-client-secret" />
          <Text size="sm" c="dimmed">
            Shown this once; only its hash is stored.
          </Text>
        </>
      ) : (
        <Text size="sm">Public client: no secret, PKCE required.</Text>
      )}
      {shown.recipe ? (
        <>
          <Text size="sm" fw={500}>
            Paste into {shown.recipe.name}
          </Text>
          <Code block>{fillRecipe(shown.recipe.paste, values)}</Code>
        </>
      ) : null}
      <Button onClick={onClose}>Done</Button>
    </ShownOnceModal>
  )
}
