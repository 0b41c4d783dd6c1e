import { Button, Card, Checkbox, Code, Group, Select, Stack, Switch, Text, Textarea, TextInput } from '@mantine/core'
import { IconPlus } from '@tabler/icons-react'
import { useState } from 'react'
import { Allowed } from '../../access'
import { useOpMutation } from '../../api'
import { ErrorNotice } from '../../components/common'
import type { ShownSecret } from './ClientModals'
import { RECIPES } from './recipes'

export const ID_TOKEN_ALGS = ['RS256', 'ES256', 'EdDSA'] as const
export type IdTokenAlg = (typeof ID_TOKEN_ALGS)[number]

/** The form registering an application, optionally from a recipe (recipes.ts). */
export function CreateClient({ issuer, onCreated }: { issuer: string; onCreated: (shown: ShownSecret) => void }) {
  const create = useOpMutation('oidc.createClient')
  const [recipeId, setRecipeId] = useState<string | null>(null)
  const [name, setName] = useState('')
  const [uris, setUris] = useState('')
  const [isPublic, setPublic] = useState(false)
  const [pkce, setPkce] = useState(true)
  const [skipConsent, setSkipConsent] = useState(false)
  const [resourceServer, setResourceServer] = useState(false)
  const [idTokenAlg, setIdTokenAlg] = useState<IdTokenAlg>('RS256')
  const [backchannel, setBackchannel] = useState('')
  const [requirePar, setRequirePar] = useState(false)
  const recipe = RECIPES.find((r) => r.id === recipeId)
  const useRecipe = (id: string | null) => {
    setRecipeId(id)
    const r = RECIPES.find((x) => x.id === id)
    if (!r) return
    setName(r.name)
    setUris(r.redirectUris.join('\n'))
    setPublic(r.public ?? false)
    setPkce(!r.noPkce)
  }
  // Only an admin who may create clients sees the form.
  return (
    <Allowed op="oidc.createClient" hide>
      <Card withBorder>
        <Stack>
          <Select
            label="Recipe"
            placeholder="Pick an application (optional)"
            data={RECIPES.map((r) => ({ value: r.id, label: r.name }))}
            value={recipeId}
            onChange={useRecipe}
            clearable
            data-testid="oidc-recipe"
          />
          {recipe ? (
            <Text size="sm" c="dimmed">
              Redirect URI pattern:{' '}
              {recipe.redirectUris.map((u) => (
                <Code key={u}>{u}</Code>
              ))}
              . Replace APP with the application’s URL. Its documentation: {recipe.docs}
            </Text>
          ) : null}
          <TextInput
            label="Name"
            value={name}
            onChange={(e) => setName(e.currentTarget.value)}
            error={create.error?.messageFor('name')}
            data-testid="oidc-name"
          />
          <Textarea
            label="Redirect URIs (one per line)"
            autosize
            minRows={2}
            value={uris}
            onChange={(e) => setUris(e.currentTarget.value)}
            error={create.error?.messageFor('redirectUris')}
            data-testid="oidc-redirect-uris"
          />
          <TextInput
            label="Back-channel logout URI (optional)"
            description="Where Gatehouse posts a logout token when a session that signed in to the application ends"
            value={backchannel}
            onChange={(e) => setBackchannel(e.currentTarget.value)}
            error={create.error?.messageFor('backchannelLogoutUri')}
            data-testid="oidc-backchannel-uri"
          />
          <Group>
            <Checkbox
              label="Public client (mobile or single-page app: no secret, PKCE)"
              checked={isPublic}
              onChange={(e) => setPublic(e.currentTarget.checked)}
            />
            <Checkbox
              label="Require PKCE"
              checked={isPublic || pkce}
              disabled={isPublic}
              onChange={(e) => setPkce(e.currentTarget.checked)}
            />
            <Checkbox
              label="Skip consent (first-party app)"
              checked={skipConsent}
              onChange={(e) => setSkipConsent(e.currentTarget.checked)}
            />
            <Checkbox
              label="Require pushed authorization requests (PAR)"
              checked={requirePar}
              onChange={(e) => setRequirePar(e.currentTarget.checked)}
              data-testid="oidc-require-par"
            />
          </Group>
          <Group>
            <Select
              label="ID token signing algorithm"
              w={220}
              data={ID_TOKEN_ALGS}
              value={idTokenAlg}
              onChange={(v) => setIdTokenAlg((v as IdTokenAlg | null) ?? 'RS256')}
              allowDeselect={false}
              data-testid="oidc-id-token-alg"
            />
            <Switch
              label="Resource server (may introspect every application’s tokens)"
              checked={resourceServer}
              onChange={(e) => setResourceServer(e.currentTarget.checked)}
              data-testid="oidc-resource-server"
            />
          </Group>
          <ErrorNotice error={create.error && !create.error.field ? create.error : null} />
          <Group>
            <Button
              leftSection={<IconPlus size={14} />}
              loading={create.isPending}
              data-testid="oidc-create"
              onClick={() =>
                create.mutate(
                  {
                    name,
                    redirectUris: uris
                      .split('\n')
                      .map((u) => u.trim())
                      .filter(Boolean),
                    public: isPublic,
                    pkceRequired: pkce,
                    skipConsent,
                    resourceServer,
                    idTokenSignedResponseAlg: idTokenAlg,
                    backchannelLogoutUri: backchannel.trim() || null,
                    requirePar,
                  },
                  { onSuccess: (answer) => onCreated({ ...answer, recipe }) },
                )
              }
            >
              Register application
            </Button>
            <Text size="xs" c="dimmed">
              Issuer: <Code>{issuer}</Code>
            </Text>
          </Group>
        </Stack>
      </Card>
    </Allowed>
  )
}
