import type { CommandDeclaration } from '../../feature.js'
import { SAML_USAGE } from './usage.js'

/** `gatehouse saml`: service providers and signing certificates (the XML and signature libraries load only when it runs). */
export const commands: CommandDeclaration[] = [
  {
    name: 'saml',
    synopsis: 'saml sp|cert …',
    summary: 'SAML service providers and certificates: gatehouse saml --help',
    usage: SAML_USAGE,
    run: async (args, env) => (await import('./cli.js')).samlCommand(args, env),
  },
]
