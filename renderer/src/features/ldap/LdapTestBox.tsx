import {
  Alert,
  Badge,
  Button,
  Card,
  Code,
  Group,
  NumberInput,
  PasswordInput,
  Select,
  Stack,
  Table,
  TagsInput,
  Text,
  TextInput,
} from '@mantine/core'
import { useState } from 'react'
import type { OpOutput } from '../../../../server/panel/contract'
import { type PanelCallError, useOpMutation } from '../../api'
import { FormCard } from '../../components/FormCard'

/**
 * "Test a bind and a filter": one simple bind and one search through the LDAP listener's own
 * functions (the `ldap.test` operation), so what it shows is what an app or `ldapsearch` gets for
 * the same bind and search. The bind is a real one: a wrong password counts towards the person's
 * lockout and the attempt is audited as this admin's.
 */

type Answer = OpOutput<'ldap.test'>
const SCOPES = [
  { value: 'sub', label: 'sub (the base and everything below)' },
  { value: 'one', label: 'one (the entries right below the base)' },
  { value: 'base', label: 'base (the base entry only)' },
]
const FIELDS = ['bindDN', 'password', 'base', 'scope', 'filter', 'attributes', 'sizeLimit'] as const

/** A DN attribute value with RFC 4514's escapes (a uid may be an email with `+`). */
const escapeDnValue = (value: string) =>
  value
    .replace(/[\\,+"<>;=]/g, (c) => `\\${c}`)
    .replace(/^[ #]/, (c) => `\\${c}`)
    .replace(/ $/, '\\ ')

function ResultBadge({ code, result, testId }: { code: number; result: string; testId: string }) {
  return (
    <Badge color={code === 0 ? 'teal.9' : code === 4 ? 'yellow.9' : 'red.9'} variant="filled" data-testid={testId} tt="none">
      {result} ({code})
    </Badge>
  )
}

/** The bind's result, then the search's result and every entry with its attributes. */
function TestAnswer({ answer, sizeLimit }: { answer: Answer; sizeLimit: number }) {
  return (
    <Stack gap="xs" mt="md" data-testid="ldap-test-answer" aria-live="polite">
      <Group gap="xs">
        <Text size="sm" fw={700}>
          Bind
        </Text>
        <ResultBadge code={answer.bind.code} result={answer.bind.result} testId="ldap-test-bind" />
        <Text size="sm">
          {answer.bind.code === 0 ? (answer.bind.boundAs ? `as ${answer.bind.boundAs}` : 'anonymous') : 'no search is made'}
        </Text>
      </Group>
      {answer.search && (
        <>
          <Group gap="xs">
            <Text size="sm" fw={700}>
              Search
            </Text>
            <ResultBadge code={answer.search.code} result={answer.search.result} testId="ldap-test-search" />
            <Text size="sm" data-testid="ldap-test-count">
              {answer.search.entries.length} {answer.search.entries.length === 1 ? 'entry' : 'entries'}
              {answer.search.code === 4 ? ` (the size limit of ${sizeLimit} was reached)` : ''}
            </Text>
          </Group>
          {answer.search.entries.map((entry) => (
            <Card key={entry.dn || '(root)'} withBorder padding="xs" data-testid="ldap-test-entry">
              <Code data-testid="ldap-test-dn">{entry.dn || '(root DSE)'}</Code>
              {entry.attributes.length > 0 && (
                <Table fz="sm" mt="xs" withRowBorders={false} verticalSpacing={2}>
                  <Table.Tbody>
                    {entry.attributes.map((a) => (
                      <Table.Tr key={a.name}>
                        <Table.Th w={180} fw={600}>
                          {a.name}
                        </Table.Th>
                        <Table.Td>
                          {a.values.map((v) => (
                            <div key={v}>{v}</div>
                          ))}
                        </Table.Td>
                      </Table.Tr>
                    ))}
                  </Table.Tbody>
                </Table>
              )}
            </Card>
          ))}
        </>
      )}
    </Stack>
  )
}

export function LdapTestBox({ baseDN, serviceUids }: { baseDN: string; serviceUids: string[] }) {
  const test = useOpMutation('ldap.test')
  const [serviceUid, setServiceUid] = useState<string | null>(null)
  const [bindDN, setBindDN] = useState('')
  const [password, setPassword] = useState('')
  const [base, setBase] = useState<string | null>(null)
  const [scope, setScope] = useState('sub')
  const [filter, setFilter] = useState('(objectClass=person)')
  const [attributes, setAttributes] = useState<string[]>([])
  const [sizeLimit, setSizeLimit] = useState(100)
  const [errors, setErrors] = useState<Record<string, string>>({})
  const [answer, setAnswer] = useState<Answer | null>(null)

  const pickService = (uid: string | null) => {
    setServiceUid(uid)
    if (uid) setBindDN(`uid=${escapeDnValue(uid)},ou=people,${baseDN}`)
  }
  const run = () => {
    setErrors({})
    setAnswer(null)
    test.mutate(
      { bindDN: bindDN.trim(), password, base: (base ?? baseDN).trim(), scope: scope as 'sub', filter, attributes, sizeLimit },
      {
        onSuccess: setAnswer,
        onError: (e: PanelCallError) => {
          const found: Record<string, string> = {}
          for (const field of FIELDS) {
            const message = e.messageFor(field)
            if (message) found[field] = message
          }
          setErrors(Object.keys(found).length ? found : { form: e.message })
        },
      },
    )
  }

  return (
    <FormCard
      title="Test a bind and a filter"
      op="ldap.test"
      testId="ldap-test-form"
      onSubmit={run}
      intro={
        <Text size="sm" mb="sm">
          Binds as a person and runs one search through the LDAP server’s own code: the answer is what an app gets. A wrong password counts
          towards that person’s lockout like any other, and the attempt is audited as yours.
        </Text>
      }
      after={
        <>
          {errors.form && (
            <Alert color="red" variant="light" mt="sm" data-testid="ldap-test-error">
              <Text size="sm" c="dark.9">
                {errors.form}
              </Text>
            </Alert>
          )}
          {answer && <TestAnswer answer={answer} sizeLimit={sizeLimit} />}
        </>
      }
    >
      <Group grow align="flex-start">
        <Select
          label="Bind as a service user"
          description="Fills in the bind DN"
          placeholder="Pick one, or type a DN"
          data={serviceUids}
          value={serviceUid}
          onChange={pickService}
          clearable
        />
        <TextInput
          label="Bind DN"
          description="Empty with an empty password: an anonymous bind"
          value={bindDN}
          onChange={(e) => setBindDN(e.currentTarget.value)}
          error={errors.bindDN}
        />
        <PasswordInput
          label="Password"
          description="The person’s password or one of their app passwords"
          value={password}
          onChange={(e) => setPassword(e.currentTarget.value)}
          error={errors.password}
          autoComplete="off"
        />
      </Group>
      <Group grow align="flex-start">
        <TextInput label="Search base" value={base ?? baseDN} onChange={(e) => setBase(e.currentTarget.value)} error={errors.base} />
        <Select
          label="Scope"
          data={SCOPES}
          value={scope}
          onChange={(v) => setScope(v ?? 'sub')}
          allowDeselect={false}
          error={errors.scope}
        />
      </Group>
      <Group grow align="flex-start">
        <TextInput
          label="Filter"
          description="RFC 4515, e.g. (&(objectClass=person)(uid=alice))"
          value={filter}
          onChange={(e) => setFilter(e.currentTarget.value)}
          error={errors.filter}
          ff="monospace"
        />
        <TagsInput
          label="Attributes"
          description="Empty: the user attributes; * user, + operational, 1.1 none"
          value={attributes}
          onChange={setAttributes}
          error={errors.attributes}
        />
        <NumberInput
          label="Size limit"
          description="Entries at most (1 to 1000)"
          min={1}
          max={1000}
          value={sizeLimit}
          onChange={(v) => setSizeLimit(typeof v === 'number' ? v : 100)}
          error={errors.sizeLimit}
        />
      </Group>
      <Group>
        <Button type="submit" loading={test.isPending} data-testid="ldap-test-run">
          Bind and search
        </Button>
      </Group>
    </FormCard>
  )
}
