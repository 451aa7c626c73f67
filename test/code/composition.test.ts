// src/app.ts only composes (issue 36): beside its imports it declares the App
// it returns and createApp(), which calls each module's registerX/createX; a
// helper written there instead of in the module that owns its concern fails
// here, as does the file growing back past a screenful of wiring.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const APP = path.resolve(__dirname, '../../src/app.ts');

/** What src/app.ts declares at its top level, by kind and name ("import" for imports and re-exports). */
function topLevel(text: string): string[] {
  const file = ts.createSourceFile(APP, text, ts.ScriptTarget.Latest, true);
  return file.statements.map((statement) => {
    if (ts.isImportDeclaration(statement) || ts.isExportDeclaration(statement)) return 'import';
    if (ts.isInterfaceDeclaration(statement)) return `interface ${statement.name.text}`;
    if (ts.isFunctionDeclaration(statement)) return `function ${statement.name?.text ?? '(anonymous)'}`;
    if (ts.isVariableStatement(statement)) return `variable ${statement.declarationList.declarations.map((d) => d.name.getText(file)).join(', ')}`;
    return ts.SyntaxKind[statement.kind];
  });
}

test('app.ts declares the App and createApp() and nothing else', () => {
  const declared = topLevel(readFileSync(APP, 'utf8')).filter((kind) => kind !== 'import');
  expect(declared).toEqual(['interface App', 'function createApp']);
});

test('app.ts stays well under 300 lines', () => {
  expect(readFileSync(APP, 'utf8').split('\n').length).toBeLessThan(200);
});

test('a helper added to app.ts is caught', () => {
  const text = `${readFileSync(APP, 'utf8')}\nfunction registerSomething(): void {}\nconst LIMIT = 1;\n`;
  expect(topLevel(text).filter((kind) => kind !== 'import')).toEqual(['interface App', 'function createApp', 'function registerSomething', 'variable LIMIT']);
});
