import { Button, Card, Code, Group, Select, Stack, Text } from '@mantine/core'
import { IconPlus } from '@tabler/icons-react'
import { useState } from 'react'
import { Allowed } from '../../access'
import { useOpMutation } from '../../api'
import { ErrorNotice } from '../../components/common'
import { ClientFields, type ClientForm, createInputOf, EMPTY_CLIENT_FORM } from './ClientFields'
import type { ShownSecret } from './ClientModals'
import { RECIPES } from './recipes'

/** The form registering an application, optionally from a recipe (recipes.ts). */
export function CreateClient({ issuer, onCreated }: { issuer: string; onCreated: (shown: ShownSecret) => void }) {
  const create = useOpMutation('oidc.createClient')
  const [recipeId, setRecipeId] = useState<string | null>(null)
  const [form, setForm] = useState<ClientForm>(EMPTY_CLIENT_FORM)
  const recipe = RECIPES.find((r) => r.id === recipeId)
  const useRecipe = (id: string | null) => {
    setRecipeId(id)
    const r = RECIPES.find((x) => x.id === id)
    if (!r) return
    setForm({ ...form, name: r.name, redirectUris: r.redirectUris.join('\n'), public: r.public ?? false, pkceRequired: !r.noPkce })
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
          <ClientFields form={form} onChange={setForm} errorFor={(field) => create.error?.messageFor(field)} prefix="oidc" />
          <ErrorNotice error={create.error && !create.error.field ? create.error : null} />
          <Group>
            <Button
              leftSection={<IconPlus size={14} />}
              loading={create.isPending}
              data-testid="oidc-create"
              onClick={() => create.mutate(createInputOf(form), { onSuccess: (answer) => onCreated({ ...answer, recipe }) })}
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
