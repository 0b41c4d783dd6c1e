import { describe, expect, it } from 'vitest'
import { runCli } from '../helpers/process.js'

/**
 * Every command and subcommand answers `--help` (and `-h`) with its usage on stdout and exit 0,
 * whatever else is on the line: nothing is opened, created or refused.
 */

const COMMANDS: { args: string[]; mentions: string }[] = [
  { args: [], mentions: 'gatehouse serve' },
  { args: ['serve'], mentions: 'gatehouse serve' },
  { args: ['user'], mentions: 'gatehouse user create' },
  { args: ['user', 'create'], mentions: 'gatehouse user create' },
  { args: ['user', 'set-role'], mentions: 'set-role' },
  { args: ['backup'], mentions: 'gatehouse backup' },
  { args: ['restore'], mentions: 'gatehouse restore' },
  { args: ['jwt'], mentions: 'gatehouse jwt rotate' },
  { args: ['jwt', 'rotate'], mentions: 'gatehouse jwt rotate' },
  { args: ['jwt', 'keys'], mentions: 'gatehouse jwt keys' },
  { args: ['oidc'], mentions: 'gatehouse oidc client create' },
  { args: ['oidc', 'client'], mentions: 'gatehouse oidc client create' },
  { args: ['oidc', 'client', 'create'], mentions: 'gatehouse oidc client create' },
  { args: ['oidc', 'client', 'create', '--name', 'Grafana'], mentions: 'gatehouse oidc client create' },
  { args: ['oidc', 'client', 'list'], mentions: 'gatehouse oidc client list' },
  { args: ['oidc', 'client', 'delete'], mentions: 'gatehouse oidc client delete' },
  { args: ['migrate'], mentions: 'gatehouse migrate' },
  { args: ['reload'], mentions: 'gatehouse reload' },
]

describe('--help on every subcommand', () => {
  // Each command with one of the two spellings, alternating, so both are asked of commands at every
  // depth: a process start costs most of a CPU-second, and the spellings share one code path.
  it.each(COMMANDS.map((command, i) => ({ ...command, flag: i % 2 === 0 ? '--help' : '-h' })))(
    'gatehouse $args $flag prints the usage and exits 0',
    async ({ args, mentions, flag }) => {
      const run = await runCli([...args, flag], { GATEHOUSE_DATA_DIR: '/nonexistent/gatehouse-help-test' })
      expect(run.stderr).toBe('')
      expect(run.code).toBe(0)
      expect(run.stdout).toMatch(/^Usage: /)
      expect(run.stdout).toContain(mentions)
    },
  )
})
