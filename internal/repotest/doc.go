// Package repotest holds the repository-wide tests: the import direction
// of the packages (TestImportDirection) and the checks of the documents
// (citations, section references, links). It has no code of its own; its
// tests read the module and its tracked files from the repository root.
package repotest
