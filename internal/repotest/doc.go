// Package repotest holds the repository-wide tests: the import direction
// of the packages (TestImportDirection), the checks of the documents
// (citations, section references, links) and of the release rules against
// docs/slurm-versions.md and the code (TestReleaseRules). It has no code of its own; its
// tests read the module and its tracked files from the repository root.
package repotest
