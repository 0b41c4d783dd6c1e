/** `gatehouse saml --help` (apart from cli.ts, which loads the SAML code: the CLI's start-up loads only this). */
export const SAML_USAGE = `Usage: gatehouse saml sp create --metadata-file FILE | --metadata-url URL [--name N]
           [--name-id-format email|persistent|unspecified] [--allowed-groups a,b] [--json]
       gatehouse saml sp list [--json]
       gatehouse saml sp update --sp ID|ENTITYID [--metadata-file FILE | --metadata-url URL] [--name N]
           [--name-id-format F] [--allowed-groups a,b] [--json]
       gatehouse saml sp delete --sp ID|ENTITYID
       gatehouse saml cert list [--json]
       gatehouse saml cert rotate [--retire] [--json]
       gatehouse saml cert retire [--json]

Options:
  --data-dir <dir>        the data directory (default ./data, or GATEHOUSE_DATA_DIR)
  --name-id-format F      email (default: the email address), persistent (the user id), unspecified, or the full URN
  --allowed-groups a,b    only members of one of these groups get an assertion (empty: everyone)
  --json                  machine-readable output (sp create/update: the service provider as JSON)
  cert rotate             a new signing certificate; the older ones stay published until --retire
                          (or \`cert retire\`), so service providers can take the new one in first

Works on the data directory whether or not a server runs on it; a running server sees the change
at its next request.
`
