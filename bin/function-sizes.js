#!/usr/bin/env node
/**
 * Lists the functions longer than a limit (issue 51 §8: none over 150 lines, at most 8 over 100).
 * Every function declaration, function expression, arrow function, method, accessor and
 * constructor counts by its line span (first line to last, inclusive); a nested function counts
 * on its own and also inside the one that holds it.
 *
 *   node bin/function-sizes.js                 functions over 100 lines under server/
 *   node bin/function-sizes.js 150 server main  over 150 lines under server/ and main/
 */
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import ts from 'typescript'

const args = process.argv.slice(2)
const limit = /^\d+$/.test(args[0] ?? '') ? Number(args.shift()) : 100
const roots = args.length > 0 ? args : ['server']

function sourceFiles(path) {
  if (statSync(path).isFile()) return [path]
  return readdirSync(path, { withFileTypes: true }).flatMap((entry) => {
    if (entry.name === 'node_modules' || entry.name.startsWith('.')) return []
    const child = join(path, entry.name)
    if (entry.isDirectory()) return sourceFiles(child)
    return /\.(ts|tsx)$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [child] : []
  })
}

function nameOf(node) {
  if (node.name && ts.isIdentifier(node.name)) return node.name.text
  if (node.name) return node.name.getText()
  if (ts.isConstructorDeclaration(node)) return 'constructor'
  const parent = node.parent
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) {
    return parent.name.getText()
  }
  if (ts.isCallExpression(parent)) return `(argument of ${parent.expression.getText().slice(0, 40)})`
  return '(anonymous)'
}

const found = []
for (const file of roots.flatMap(sourceFiles)) {
  const text = readFileSync(file, 'utf8')
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true)
  const visit = (node) => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line
      const last = source.getLineAndCharacterOfPosition(node.getEnd()).line
      const lines = last - first + 1
      if (lines > limit) found.push({ name: nameOf(node), file: relative(process.cwd(), file), line: first + 1, lines })
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
}

found.sort((a, b) => b.lines - a.lines)
for (const f of found) console.log(`${String(f.lines).padStart(4)}  ${f.name}  ${f.file}:${f.line}`)
console.log(`${found.length} function(s) over ${limit} lines`)
