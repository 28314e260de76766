// Package main is cairn's test provider written with HashiCorp's
// terraform-plugin-sdk/v2, as most providers in the Terraform registry
// are: it uses what SDKv2 providers really use (Optional+Computed,
// ForceNew, Default, sets of nested blocks, a list block of at most one,
// Sensitive, DiffSuppressFunc, StateFunc, an importer, a schema version
// with a state upgrader) so that the bridge's tfprotov5 path and its
// legacy type system normalisations are tested against the real library.
//
// Its objects live only in state (as hashicorp/null's and random's do):
// create derives an id and a fingerprint from the configuration, read
// keeps what state has, import rebuilds an object from its id.
package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/hashicorp/terraform-plugin-sdk/v2/diag"
	"github.com/hashicorp/terraform-plugin-sdk/v2/helper/schema"
	"github.com/hashicorp/terraform-plugin-sdk/v2/helper/validation"
)

// Provider is the SDKv2 provider `tfsdkv2`, as a Terraform provider's
// `provider.New()` returns it.
func Provider() *schema.Provider {
	return &schema.Provider{
		Schema: map[string]*schema.Schema{
			"prefix": {
				Type:        schema.TypeString,
				Optional:    true,
				Default:     "w",
				Description: "What every widget id starts with.",
			},
		},
		ResourcesMap: map[string]*schema.Resource{
			"tfsdkv2_widget":  widgetResource(),
			"tfsdkv2_note":    noteResource(),
			"tfsdkv2_counter": counterResource(),
		},
		DataSourcesMap: map[string]*schema.Resource{
			"tfsdkv2_lookup": lookupDataSource(),
		},
		ConfigureContextFunc: func(_ context.Context, d *schema.ResourceData) (any, diag.Diagnostics) {
			return &config{prefix: d.Get("prefix").(string)}, nil
		},
	}
}

// config is what ConfigureContextFunc hands every resource as `meta`.
type config struct{ prefix string }

func widgetResource() *schema.Resource {
	return &schema.Resource{
		Description:   "A widget: lives in state only, with an id made of the provider's prefix and its name.",
		SchemaVersion: 1,
		StateUpgraders: []schema.StateUpgrader{{
			Version: 0,
			Type:    widgetV0().CoreConfigSchema().ImpliedType(),
			Upgrade: upgradeWidgetV0,
		}},
		CreateContext: createWidget,
		ReadContext:   readWidget,
		UpdateContext: updateWidget,
		DeleteContext: func(context.Context, *schema.ResourceData, any) diag.Diagnostics { return nil },
		Importer:      &schema.ResourceImporter{StateContext: schema.ImportStatePassthroughContext},
		// The fingerprint follows the name, size and tags: say so in the
		// plan, or the apply's new fingerprint breaks it.
		CustomizeDiff: func(_ context.Context, d *schema.ResourceDiff, _ any) error {
			if d.Id() != "" && d.HasChanges("name", "size", "tag") {
				return d.SetNewComputed("fingerprint")
			}
			return nil
		},
		Schema: widgetSchema(),
	}
}

// widgetSchema is the widget's schema at version 1.
func widgetSchema() map[string]*schema.Schema {
	return map[string]*schema.Schema{
		"name": {
			Type:         schema.TypeString,
			Required:     true,
			ForceNew:     true,
			ValidateFunc: validation.StringLenBetween(1, 64),
		},
		"description": {
			// Optional+Computed: the provider fills it in when unset.
			Type:     schema.TypeString,
			Optional: true,
			Computed: true,
		},
		"size": {
			Type:     schema.TypeInt,
			Optional: true,
			Default:  3,
		},
		"color": {
			// Upper and lower case are the same color.
			Type:             schema.TypeString,
			Optional:         true,
			DiffSuppressFunc: func(_, old, new string, _ *schema.ResourceData) bool { return strings.EqualFold(old, new) },
		},
		"secret": {
			Type:      schema.TypeString,
			Optional:  true,
			Sensitive: true,
		},
		"enabled": {
			// Optional without default: SDKv2 stores false for unset.
			Type:     schema.TypeBool,
			Optional: true,
		},
		"labels": {
			Type:     schema.TypeMap,
			Optional: true,
			Elem:     &schema.Schema{Type: schema.TypeString},
		},
		"tag": {
			Type:     schema.TypeSet,
			Optional: true,
			Elem: &schema.Resource{Schema: map[string]*schema.Schema{
				"key":   {Type: schema.TypeString, Required: true},
				"value": {Type: schema.TypeString, Optional: true},
			}},
		},
		"settings": {
			Type:     schema.TypeList,
			Optional: true,
			MaxItems: 1,
			Elem: &schema.Resource{Schema: map[string]*schema.Schema{
				"mode":    {Type: schema.TypeString, Optional: true, Default: "auto"},
				"retries": {Type: schema.TypeInt, Optional: true},
			}},
		},
		"fingerprint": {
			Type:     schema.TypeString,
			Computed: true,
		},
	}
}

// widgetV0 is the widget's schema at version 0, when size was a string.
func widgetV0() *schema.Resource {
	v0 := widgetSchema()
	v0["size"] = &schema.Schema{Type: schema.TypeString, Optional: true}
	return &schema.Resource{Schema: v0}
}

// upgradeWidgetV0 turns version 0's string size into a number.
func upgradeWidgetV0(_ context.Context, raw map[string]any, _ any) (map[string]any, error) {
	if s, ok := raw["size"].(string); ok {
		n, err := strconv.Atoi(s)
		if err != nil {
			return nil, fmt.Errorf("size %q of a version 0 widget is not a whole number", s)
		}
		raw["size"] = n
	}
	return raw, nil
}

func createWidget(_ context.Context, d *schema.ResourceData, meta any) diag.Diagnostics {
	d.SetId(meta.(*config).prefix + "-" + d.Get("name").(string))
	return fillWidget(d)
}

func updateWidget(_ context.Context, d *schema.ResourceData, _ any) diag.Diagnostics {
	return fillWidget(d)
}

// fillWidget sets the computed attributes from the configured ones.
func fillWidget(d *schema.ResourceData) diag.Diagnostics {
	if d.Get("description").(string) == "" {
		if err := d.Set("description", "widget "+d.Get("name").(string)); err != nil {
			return diag.FromErr(err)
		}
	}
	if err := d.Set("fingerprint", widgetFingerprint(d)); err != nil {
		return diag.FromErr(err)
	}
	return nil
}

// widgetFingerprint is a digest of the widget's name, size and tags.
func widgetFingerprint(d *schema.ResourceData) string {
	var tags []string
	for _, t := range d.Get("tag").(*schema.Set).List() {
		m := t.(map[string]any)
		tags = append(tags, m["key"].(string)+"="+m["value"].(string))
	}
	sort.Strings(tags)
	sum := sha256.Sum256([]byte(fmt.Sprintf("%s/%d/%s", d.Get("name"), d.Get("size"), strings.Join(tags, ","))))
	return hex.EncodeToString(sum[:6])
}

// readWidget keeps what state has; an imported widget (only its id is
// known) gets its name back from the id.
func readWidget(_ context.Context, d *schema.ResourceData, meta any) diag.Diagnostics {
	if d.Get("name").(string) == "" {
		prefix := meta.(*config).prefix + "-"
		name, ok := strings.CutPrefix(d.Id(), prefix)
		if !ok {
			return diag.Errorf("the widget id %q does not start with the provider's prefix %q", d.Id(), prefix)
		}
		if err := d.Set("name", name); err != nil {
			return diag.FromErr(err)
		}
		if err := d.Set("size", 3); err != nil {
			return diag.FromErr(err)
		}
		return fillWidget(d)
	}
	return nil
}

// noteResource keeps its text through a StateFunc: state holds the text
// trimmed and lower-cased, not what the configuration says.
func noteResource() *schema.Resource {
	return &schema.Resource{
		Description: "A note whose text is stored normalised by a StateFunc.",
		CreateContext: func(_ context.Context, d *schema.ResourceData, _ any) diag.Diagnostics {
			d.SetId("note")
			return nil
		},
		ReadContext:   func(context.Context, *schema.ResourceData, any) diag.Diagnostics { return nil },
		DeleteContext: func(context.Context, *schema.ResourceData, any) diag.Diagnostics { return nil },
		Schema: map[string]*schema.Schema{
			"text": {
				Type:      schema.TypeString,
				Required:  true,
				ForceNew:  true,
				StateFunc: func(v any) string { return strings.ToLower(strings.TrimSpace(v.(string))) },
			},
		},
	}
}

// counterResource counts its updates without saying so in the plan (it
// has no CustomizeDiff marking updates unknown): a bug Terraform tolerates
// in a legacy provider, and cairn refuses.
func counterResource() *schema.Resource {
	noop := func(context.Context, *schema.ResourceData, any) diag.Diagnostics { return nil }
	return &schema.Resource{
		Description: "Counts its updates, which its plans do not foresee.",
		CreateContext: func(_ context.Context, d *schema.ResourceData, _ any) diag.Diagnostics {
			d.SetId("counter")
			return diag.FromErr(d.Set("updates", 0))
		},
		UpdateContext: func(_ context.Context, d *schema.ResourceData, _ any) diag.Diagnostics {
			return diag.FromErr(d.Set("updates", d.Get("updates").(int)+1))
		},
		ReadContext:   noop,
		DeleteContext: noop,
		Schema: map[string]*schema.Schema{
			"label":   {Type: schema.TypeString, Optional: true},
			"updates": {Type: schema.TypeInt, Computed: true},
		},
	}
}

func lookupDataSource() *schema.Resource {
	return &schema.Resource{
		Description: "Facts about a name.",
		ReadContext: func(_ context.Context, d *schema.ResourceData, meta any) diag.Diagnostics {
			name := d.Get("name").(string)
			d.SetId(meta.(*config).prefix + "-" + name)
			if err := d.Set("upper", strings.ToUpper(name)); err != nil {
				return diag.FromErr(err)
			}
			if err := d.Set("length", len(name)); err != nil {
				return diag.FromErr(err)
			}
			return nil
		},
		Schema: map[string]*schema.Schema{
			"name":   {Type: schema.TypeString, Required: true},
			"upper":  {Type: schema.TypeString, Computed: true},
			"length": {Type: schema.TypeInt, Computed: true},
		},
	}
}
