/**
 * The chapters the v1 double knows: an entry chapter that designs the workflow and two chapters of
 * sales analysis. Each section is an event chain driven by `state.toDoList`, like the Easy-notebook
 * server's step code (docs/dialects.md#v1).
 */
import { pyString } from '../../../../src/referencePlanner/pandasCode';

/** One action as the v1 server spells it: the type under `action`, camelCase and snake_case as listed. */
export type V1Action = { action: string } & Record<string, unknown>;

export interface IHandlerContext {
  /** The state being built (a copy of the request's). */
  readonly variables: Record<string, unknown>;
  /** `effect.current` of the request: the client's outputs of the previous behavior. */
  readonly effectCurrent: readonly unknown[];
  /** A variable from `state.variables`, else a top-level state key. */
  lookup(name: string): unknown;
  emit(action: V1Action): void;
  /** Queue the next event; the behavior ends after this handler. */
  push(event: string): void;
  /** Add or replace a top-level state key (lines before this one do not show it). */
  setStateKey(key: string, value: unknown): void;
}

export type Handler = (context: IHandlerContext) => void;

export interface ISection {
  /** Bare id, `section_N_<slug>`. */
  id: string;
  title: string;
  description: string;
  /** Variables that must be present before the step starts. */
  requires: string[];
  /** The chain in order: the first one is the start handler; behavior n runs handler n. */
  handlers: Array<[event: string, handler: Handler]>;
  /** The entry step runs its whole chain in one response. */
  wholeChain?: boolean;
}

export interface IChapter {
  id: string;
  title: string;
  description: string;
  icon: string;
  /** The fixed order; a section without handlers is declared but has no code. */
  sections: ISection[];
  /** The section that `update_stage_steps` drops from the plan. */
  dropped?: string;
}

export const ENTRY_STAGE = 'chapter_0_planning';
export const ENTRY_STEP = 'section_1_design_workflow';

const code = (...lines: string[]): string => lines.join('\n');

/** A variable as text (the client sends exec outputs as strings). */
function text(value: unknown): string {
  return typeof value === 'string' ? value.trim() : JSON.stringify(value);
}

const dialogue = (content: string): V1Action => ({
  action: 'add',
  shotType: 'dialogue',
  content
});
const codeCell = (content: string): V1Action => ({
  action: 'add',
  shotType: 'action',
  content
});
const exec = (): V1Action => ({
  action: 'exec',
  codecell_id: 'lastAddedCellId'
});
const thinkingDone = (thinkingText: string): V1Action => ({
  action: 'set_effect_as_thinking',
  thinkingText
});

/**
 * An after-exec handler: saves `effect.current[0]` as `variable`, then runs `next`. Without an
 * output it names itself and the missing list, and the event is dropped (the chain goes on).
 */
function capture(
  event: string,
  variable: string,
  next: (context: IHandlerContext, value: string) => void
): [string, Handler] {
  return [
    event,
    context => {
      const first = context.effectCurrent[0];
      if (first === undefined || first === null || text(first) === '') {
        context.emit(
          dialogue(
            `Handler ${event} cannot run: the output of the last cell is missing ['effect.current']`
          )
        );
        return;
      }
      const value = text(first);
      context.variables[variable] = value;
      next(context, value);
    }
  ];
}

function readCsv(context: IHandlerContext): string {
  return `sales = pd.read_csv(${pyString(String(context.lookup('csv_file_path')))})`;
}

/** Section 1 of an analysis chapter: announce it, then replace the chapter's steps. */
function initialization(chapterOf: () => IChapter): ISection {
  return {
    id: 'section_1_workflow_initialization',
    title: 'Workflow initialization',
    description: 'Restate the problem and fix the steps of this chapter.',
    requires: ['problem_description'],
    handlers: [
      [
        'start',
        context => {
          const chapter = chapterOf();
          context.emit({
            action: 'new_chapter',
            shotType: 'dialogue',
            content: chapter.title
          });
          context.emit({
            action: 'new_section',
            shotType: 'dialogue',
            content: 'Workflow initialization'
          });
          context.emit(
            dialogue(
              `Problem: ${text(context.lookup('problem_description'))}\n\n${chapter.description}`
            )
          );
          context.emit({
            action: 'is_thinking',
            shotType: 'thinking',
            textArray: ['Reading the problem…', 'Choosing the steps…'],
            agentName: '',
            customText: null
          });
          context.push('plan_sections');
        }
      ],
      [
        'plan_sections',
        context => {
          const chapter = chapterOf();
          const kept = chapter.sections.filter(s => s.id !== chapter.dropped);
          const running = `${chapter.id}_${kept[0].id}`;
          const steps = kept.map((section, index) => ({
            id: `${chapter.id}_${section.id}`,
            step_id: section.id,
            name: section.title,
            description: section.description,
            status: index === 0 ? 'completed' : 'pending'
          }));
          context.emit({ action: 'finish_thinking' });
          context.emit(
            dialogue(
              `This chapter needs ${steps.length} steps; “${chapter.sections.find(s => s.id === chapter.dropped)?.title ?? ''}” is not needed.`
            )
          );
          context.emit({
            action: 'update_stage_steps',
            stage_id: chapter.id,
            updated_steps: steps,
            next_step_id: running
          });
          context.setStateKey('current_workflow', {
            stages: [
              {
                id: chapter.id,
                name: chapter.title,
                description: chapter.description,
                steps
              }
            ]
          });
          context.emit(dialogue(`Next: ${steps[1]?.name ?? 'nothing'}.`));
        }
      ]
    ]
  };
}

const CHAPTER_1: IChapter = {
  id: 'chapter_1_data_existence_establishment',
  title: 'Data existence establishment',
  description:
    'Confirm the sales data exists, and learn its columns and types.',
  icon: '🔍',
  dropped: 'section_4_data_preview_report',
  sections: [
    initialization(() => CHAPTER_1),
    {
      id: 'section_2_data_structure_discovery',
      title: 'Data structure discovery',
      description: 'List the columns and the shape of the table.',
      requires: ['problem_description', 'csv_file_path'],
      handlers: [
        [
          'start',
          context => {
            context.emit({
              action: 'new_section',
              shotType: 'dialogue',
              content: 'Data structure discovery'
            });
            context.emit(dialogue('First, the column names of the data file.'));
            context.emit(
              codeCell(
                code(
                  'import pandas as pd',
                  readCsv(context),
                  'print(list(sales.columns))'
                )
              )
            );
            context.emit(exec());
            context.emit(thinkingDone('columns listed'));
            context.push('read_columns');
          }
        ],
        capture('read_columns', 'column_names', (context, columns) => {
          context.emit(dialogue(`The columns are ${columns}. Now the shape.`));
          context.emit(
            codeCell(
              code('print(f"{sales.shape[0]} rows x {sales.shape[1]} columns")')
            )
          );
          context.emit(exec());
          context.emit(thinkingDone('shape measured'));
          context.push('record_shape');
        }),
        capture('record_shape', 'data_shape', (context, shape) => {
          context.emit(dialogue(`Structure discovered ✅ — ${shape}.`));
        })
      ]
    },
    {
      id: 'section_3_variable_semantic_analysis',
      title: 'Variable semantic analysis',
      description: 'Types of the columns and the regions present.',
      requires: ['csv_file_path', 'column_names'],
      handlers: [
        [
          'start',
          context => {
            context.emit({
              action: 'new_section',
              shotType: 'dialogue',
              content: 'Variable semantic analysis'
            });
            context.emit(
              dialogue(
                `Known columns: ${text(context.lookup('column_names'))}. Their types:`
              )
            );
            context.emit(
              codeCell(
                code(
                  'import pandas as pd',
                  readCsv(context),
                  'print(sales.dtypes.astype(str).to_dict())'
                )
              )
            );
            context.emit(exec());
            context.push('read_types');
          }
        ],
        capture('read_types', 'variable_types', (context, types) => {
          context.emit(dialogue(`Types: ${types}. Which regions are there?`));
          context.emit(codeCell('print(sorted(sales["region"].unique()))'));
          context.emit(exec());
          context.emit(thinkingDone('regions listed'));
          context.push('read_regions');
        }),
        capture('read_regions', 'region_values', (context, regions) => {
          context.emit(dialogue(`Regions: ${regions}.`));
        })
      ]
    },
    {
      id: 'section_4_data_preview_report',
      title: 'Data preview report',
      description: 'A printed preview of the first rows.',
      requires: ['csv_file_path'],
      handlers: []
    }
  ]
};

const CHAPTER_2: IChapter = {
  id: 'chapter_2_revenue_exploration',
  title: 'Revenue exploration',
  description: 'Revenue per region and per month.',
  icon: '📈',
  dropped: 'section_4_seasonality_check',
  sections: [
    initialization(() => CHAPTER_2),
    {
      id: 'section_2_revenue_by_region',
      title: 'Revenue by region',
      description: 'Total revenue of each region.',
      // The published server's chapter 2 steps need the data described ("file, rows x columns").
      requires: ['csv_file_path', 'column_names', 'context_description'],
      handlers: [
        [
          'start',
          context => {
            context.emit({
              action: 'new_section',
              shotType: 'dialogue',
              content: 'Revenue by region'
            });
            context.emit(
              codeCell(
                code(
                  'import pandas as pd',
                  readCsv(context),
                  'print(sales.groupby("region")["revenue"].sum().round(2).to_dict())'
                )
              )
            );
            context.emit(exec());
            context.emit(thinkingDone('totals computed'));
            context.push('read_region_totals');
          }
        ],
        capture(
          'read_region_totals',
          'revenue_by_region',
          (context, totals) => {
            context.emit(dialogue(`Revenue per region: ${totals}.`));
          }
        )
      ]
    },
    {
      id: 'section_3_monthly_trend',
      title: 'Monthly trend',
      description: 'Revenue per month and the best month.',
      requires: ['csv_file_path', 'revenue_by_region'],
      handlers: [
        [
          'start',
          context => {
            context.emit({
              action: 'new_section',
              shotType: 'dialogue',
              content: 'Monthly trend'
            });
            context.emit(
              codeCell(
                code(
                  'import pandas as pd',
                  readCsv(context),
                  'monthly = sales.groupby("month")["revenue"].sum()',
                  'print(f"{len(monthly)} months, best {monthly.idxmax()}")'
                )
              )
            );
            context.emit(exec());
            context.push('read_trend');
          }
        ],
        capture('read_trend', 'monthly_trend', (context, trend) => {
          context.emit(dialogue(`Trend: ${trend}. One last summary.`));
          context.emit(
            codeCell('print(f"mean monthly revenue {monthly.mean():.2f}")')
          );
          context.emit(exec());
          context.push('close_report');
        }),
        capture('close_report', 'final_summary', (context, summary) => {
          context.emit(dialogue(`Done 🎉 ${summary}`));
        })
      ]
    },
    {
      id: 'section_4_seasonality_check',
      title: 'Seasonality check',
      description: 'Compare the same month across years.',
      requires: ['csv_file_path'],
      handlers: []
    }
  ]
};

/** The workflow the entry step proposes: every chapter but the entry one. */
export const ANALYSIS_CHAPTERS: readonly IChapter[] = [CHAPTER_1, CHAPTER_2];

const ENTRY_CHAPTER: IChapter = {
  id: ENTRY_STAGE,
  title: 'Planning',
  description: 'Turn the goal into a workflow of chapters.',
  icon: '🧭',
  sections: [
    {
      id: ENTRY_STEP,
      title: 'Design the workflow',
      description: 'Read the goal and propose the chapters.',
      // The real server's DesignWorkflow requires these four, each non-empty, before anything runs.
      requires: [
        'problem_name',
        'user_goal',
        'problem_description',
        'context_description'
      ],
      wholeChain: true,
      handlers: [
        [
          'start',
          context => {
            context.emit({
              action: 'update_title',
              title: `${text(context.lookup('problem_name'))}: Data Science Analysis`
            });
            context.emit({
              action: 'is_thinking',
              shotType: 'thinking',
              textArray: ['Reading the goal…'],
              agentName: 'Planner',
              customText: 'Designing the workflow'
            });
            context.emit({
              ...dialogue(`Goal: ${text(context.lookup('user_goal'))}`),
              delay: 30
            });
            context.emit({ action: 'finish_thinking' });
            context.emit(
              codeCell(
                code('import pandas as pd', 'print("pandas", pd.__version__)')
              )
            );
            context.emit(exec());
            context.push('analyze_goal');
          }
        ],
        [
          'analyze_goal',
          context => {
            context.emit(
              codeCell(
                `print(${pyString('goal: ' + text(context.lookup('user_goal')))})`
              )
            );
            context.emit(exec());
            context.emit(thinkingDone('goal restated'));
            context.push('design_stages');
          }
        ],
        [
          'design_stages',
          context => {
            context.variables.workflow_chapters = ANALYSIS_CHAPTERS.map(
              chapter => chapter.id
            );
            context.emit(
              dialogue(
                `Proposed ${ANALYSIS_CHAPTERS.length} chapters: ${ANALYSIS_CHAPTERS.map(c => c.title).join(' → ')}.`
              )
            );
            context.emit({
              action: 'update_workflow',
              updated_workflow: {
                workflowTemplate: {
                  name: 'Sales analysis',
                  stages: ANALYSIS_CHAPTERS.map(chapter => ({
                    id: chapter.id,
                    title: chapter.title,
                    description: chapter.description,
                    steps: chapter.sections.map(section => ({
                      id: `${chapter.id}_${section.id}`,
                      step_id: section.id,
                      title: section.title,
                      description: section.description
                    }))
                  }))
                },
                nextStageId: ANALYSIS_CHAPTERS[0].id
              }
            });
          }
        ]
      ]
    }
  ]
};

export const CHAPTERS: readonly IChapter[] = [
  ENTRY_CHAPTER,
  ...ANALYSIS_CHAPTERS
];
