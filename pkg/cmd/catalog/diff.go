package catalog

import (
	"context"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/gpufinops/gpufinops/pkg/cmdutil"
	"github.com/gpufinops/gpufinops/pkg/envelope"
	"github.com/gpufinops/gpufinops/pkg/iostreams"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/pricing/cache"
	pcatalog "github.com/gpufinops/gpufinops/pricing/catalog"
)

// DiffKind and DiffSchemaVersion head the JSON document of `catalog diff`.
const (
	DiffKind          = "CatalogDiff"
	DiffSchemaVersion = "1.0"
)

// The names `catalog diff` takes for the two catalogs it can build itself.
const (
	// SideEmbedded is the catalog built into gpufinops.
	SideEmbedded = "embedded"
	// SideOverlay is the cache's overlay file laid over the embedded
	// catalog: what every command prices with.
	SideOverlay = "overlay"
)

// DiffDocument is what `catalog diff -o json` writes.
type DiffDocument struct {
	envelope.Header
	// Old and New name the two catalogs compared: "embedded", "overlay" or
	// a file's path.
	Old string `json:"old"`
	New string `json:"new"`
	// MoveThresholdPercent is the relative change past which a price counts
	// as moved.
	MoveThresholdPercent int `json:"moveThresholdPercent"`
	pcatalog.Changes
}

// DiffOptions are the inputs of `gpufinops catalog diff`.
type DiffOptions struct {
	IO          *iostreams.IOStreams
	Embedded    func() (pricing.Catalog, error)
	OverlayPath func() (string, error)

	// Old and New are "embedded", "overlay" or an overlay file's path.
	Old, New string
	Output   string
	Filter   cmdutil.Filter
	Ctx      context.Context
}

// NewCmdDiff builds `catalog diff`; runF replaces the run function in tests.
func NewCmdDiff(f *cmdutil.Factory, runF func(*DiffOptions) error) *cobra.Command {
	opts := &DiffOptions{IO: f.IOStreams, Embedded: f.EmbeddedCatalog, OverlayPath: f.OverlayPath}
	var output *cmdutil.Output
	cmd := &cobra.Command{
		Use:   "diff [OLD [NEW]]",
		Short: "Show what changed between two price catalogs",
		Long: `Show what changed between two price catalogs: instance types and (region, type)
offers added or removed, and on-demand and spot prices that moved by more than
10 % (or appeared or went away on an offer both have).

OLD and NEW are each 'embedded' (the catalog built into gpufinops), 'overlay'
(the cache's overlay file from 'catalog update' laid over it: what every command
prices with) or the path of a file 'catalog update --file' or 'make catalog'
wrote, laid over the embedded catalog. OLD defaults to embedded and NEW to
overlay, so a bare 'catalog diff' says what your last updates changed. Two
snapshot files compare what one price run changed against the other: run it
before a release on the old and the new 'make catalog' output.`,
		Example: `  $ gpufinops catalog diff
  $ gpufinops catalog diff embedded snapshot.json -o markdown
  $ gpufinops catalog diff old-snapshot.json new-snapshot.json -o json`,
		Args: cobra.MaximumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Old, opts.New = SideEmbedded, SideOverlay
			if len(args) > 0 {
				opts.Old = args[0]
			}
			if len(args) > 1 {
				opts.New = args[1]
			}
			opts.Output, opts.Filter, opts.Ctx = output.Format(), output.Filter, cmd.Context()
			if runF != nil {
				return runF(opts)
			}
			return diffRun(opts)
		},
	}
	output = cmdutil.AddOutputFlags(cmd, cmdutil.FormatTable, cmdutil.FormatJSON, cmdutil.FormatMarkdown)
	return cmd
}

func diffRun(opts *DiffOptions) error {
	base, err := opts.Embedded()
	if err != nil {
		return err
	}
	old, err := diffSide(opts, base, opts.Old, "OLD")
	if err != nil {
		return err
	}
	new, err := diffSide(opts, base, opts.New, "NEW")
	if err != nil {
		return err
	}
	doc := &DiffDocument{Header: envelope.New(DiffKind, DiffSchemaVersion), Old: opts.Old, New: opts.New,
		MoveThresholdPercent: pcatalog.MoveThreshold, Changes: pcatalog.Diff(old, new)}
	return cmdutil.Print(opts.Ctx, opts.IO.Out, opts.Output, opts.Filter, doc, cmdutil.Printers{
		cmdutil.FormatTable:    func(w io.Writer) error { return doc.WriteText(w) },
		cmdutil.FormatMarkdown: func(w io.Writer) error { return doc.WriteMarkdown(w) },
	})
}

// diffSide builds the catalog one argument names.
func diffSide(opts *DiffOptions, base pricing.Catalog, name, arg string) (pricing.Catalog, error) {
	switch name {
	case SideEmbedded:
		return base, nil
	case SideOverlay:
		path, err := opts.OverlayPath()
		if err != nil {
			return nil, err
		}
		ov, err := cache.ReadOverlay(path)
		if err != nil {
			return nil, &cmdutil.InputError{Err: err}
		}
		// No overlay yet: the catalog every command uses is the embedded one.
		return ov.Catalog(base, path), nil
	}
	if _, err := os.Stat(name); err != nil {
		return nil, cmdutil.FlagErrorf("%s %q: not 'embedded', 'overlay' or a file that exists", arg, name)
	}
	ov, err := cache.ReadOverlay(name)
	if err != nil {
		return nil, &cmdutil.InputError{Err: err}
	}
	return ov.Catalog(base, name), nil
}
