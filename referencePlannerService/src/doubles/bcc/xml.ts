/**
 * The XML answers of the bcc double, written as text and malformed the way recorded answers are:
 * `<` and `&` left unescaped in text, a valueless `optional`, and per scenario a truncated document
 * or a mismatched closing tag (docs/dialects.md#bcc).
 */
import { BCC_WORKFLOW_TITLE, IBccStage, IBccStep } from './plan';

export type Layout = 'payload' | 'prompt';
export type Damage = 'none' | 'truncated' | 'mismatched';

const artifactList = (names: readonly string[]): string =>
  names.map(name => `<artifact>${name}</artifact>`).join('');

const block = (tag: string, names: readonly string[]): string =>
  names.length ? `<${tag}>${artifactList(names)}</${tag}>` : `<${tag}/>`;

function stageXml(stage: IBccStage): string {
  const artifacts = stage.steps
    .map(
      step =>
        `<variable name="${step.artifact.name}">${step.artifact.description}</variable>`
    )
    .join('');
  return [
    `    <stage id="${stage.id}" title="${stage.title}"${stage.optional ? ' optional' : ''}>`,
    `      <goal>${stage.goal}</goal>`,
    `      <verified_artifacts>${artifacts}</verified_artifacts>`,
    '      <required_variables><variable name="user_submit_files">uploaded CSV</variable></required_variables>',
    '    </stage>'
  ].join('\n');
}

/** The answer to `IDLE`: stages inside `<remaining>`, optionally wrapped in `<workflow>`. */
export function stagesXml(
  stages: readonly IBccStage[],
  root: 'stages' | 'workflow',
  damage: Damage
): string {
  const focus =
    'Keep it short & check every region; flag months with revenue < 5000.';
  const inner = [
    '<stages>',
    '  <remaining>',
    ...stages.map(stageXml),
    '  </remaining>',
    `  <focus>${focus}</focus>`,
    '</stages>'
  ].join('\n');
  const whole =
    root === 'workflow'
      ? [
          '<workflow>',
          `  <title>${BCC_WORKFLOW_TITLE}</title>`,
          '  <description>Monthly sales of five regions: check the data, then summarise revenue.</description>',
          inner,
          '</workflow>'
        ].join('\n')
      : inner;
  if (damage === 'truncated') {
    // Cut inside the focus text: the closing tags of focus and stages never arrive.
    return whole.slice(0, whole.indexOf(focus) + 20);
  }
  return whole;
}

/** The answer to `STAGE_RUNNING`: steps without a `<remaining>` wrapper, then focus and goals. */
export function stepsXml(stage: IBccStage): string {
  const steps = stage.steps.map(step =>
    [
      `  <step id="${step.id}" title="${step.title}">`,
      `    <goal>${step.goal}</goal>`,
      `    <verified_artifacts><variable name="${step.artifact.name}">${step.artifact.description}</variable></verified_artifacts>`,
      '    <required_variables><variable name="user_submit_files">uploaded CSV</variable></required_variables>',
      '    <pcs_considerations><predictability>same rows on every run</predictability><computability>pandas only, < 1 s</computability><stability>no sampling</stability></pcs_considerations>',
      '  </step>'
    ].join('\n')
  );
  return [
    '<steps>',
    ...steps,
    `  <focus>${stage.title}: ${stage.steps.map(s => s.title).join(' & ')}.</focus>`,
    `  <goals>${stage.steps[0].goal}</goals>`,
    '</steps>'
  ].join('\n');
}

/** The answer to `STEP_RUNNING`: behavior `iteration` of a step. */
export function behaviorXml(
  step: IBccStep,
  iteration: number,
  csvPath: string,
  damage: Damage
): string {
  const id = `${step.id}_b${iteration}`;
  const task =
    iteration <= 1
      ? `Create ${step.artifact.name}: ${step.goal}`
      : `Check ${step.artifact.name} & print the completion marker.`;
  const taskClose = damage === 'mismatched' ? '</tsak>' : '</task>';
  return [
    `<behavior id="${id}" step_id="${step.id}">`,
    '  <agent>Explore-Agent</agent>',
    `  <task behavior_id="${id}">${task}${taskClose}`,
    `  <inputs><variable name="user_submit_files">${csvPath}</variable></inputs>`,
    '  <effects>False</effects>',
    `  <outputs><artifact name="${step.artifact.name}">${step.artifact.description}</artifact></outputs>`,
    `  <acceptance><criterion>${step.artifact.name} exists & len(sales_df) > 0</criterion></acceptance>`,
    ...(iteration > 1
      ? [
          `  <whathappened>Behavior ${iteration - 1} created ${step.artifact.name}.</whathappened>`
        ]
      : []),
    '</behavior>'
  ].join('\n');
}

/** The answer at `BEHAVIOR_COMPLETED`. */
export function reflectionXml(
  step: IBccStep,
  complete: boolean,
  layout: Layout
): string {
  const name = step.artifact.name;
  const running = layout === 'prompt' ? 'STATE_Step_Running' : 'STEP_RUNNING';
  return [
    `<reflection current_step_is_complete="${complete}">`,
    '  <evaluation>',
    `    <artifacts_produced><artifact name="${name}" status="${complete ? 'complete' : 'incomplete'}"/></artifacts_produced>`,
    `    <acceptance_validation><criterion status="${complete ? 'passed' : 'partial'}">${name} exists & len(sales_df) > 0</criterion></acceptance_validation>`,
    '    <execution_quality><code_execution>ran</code_execution><errors_found>none</errors_found></execution_quality>',
    `    <goal_achievement><status>${complete ? 'achieved' : 'partial'}</status><reasoning>${complete ? 'the completion marker is in the outputs' : 'the completion marker is not in the outputs yet'}</reasoning></goal_achievement>`,
    '  </evaluation>',
    ...(complete && layout === 'payload'
      ? [
          `  <new_variable><save_current_effect name="${step.id}_output"/></new_variable>`
        ]
      : []),
    `  <decision><next_state>${complete ? 'STEP_COMPLETED' : running}</next_state><reasoning>${complete ? 'step done' : `check ${name} next`}</reasoning></decision>`,
    '  <context_for_next>',
    `    <variables_produced><variable name="${name}" value="${complete ? 'checked' : 'created'}">${step.artifact.description}</variable></variables_produced>`,
    `    <whathappened><overview>${name} ${complete ? 'checked' : 'created'}</overview><key_findings>the code ran without errors</key_findings></whathappened>`,
    `    <recommendations_for_next><if_continuing_behavior>Check ${name} & print the marker.</if_continuing_behavior><if_moving_forward>Go on with the next step.</if_moving_forward></recommendations_for_next>`,
    '  </context_for_next>',
    `  <outputs_tracking_update>${block('produced', complete ? [name] : [])}${block('in_progress', complete ? [] : [name])}${block('remaining', [])}</outputs_tracking_update>`,
    '</reflection>'
  ].join('\n');
}

/** The answer at `STEP_COMPLETED` for step `index` of `stage`; `complete` may end it before its last step. */
export function stageReflectionXml(
  stage: IBccStage,
  index: number,
  layout: Layout,
  complete = index === stage.steps.length - 1
): string {
  const step = stage.steps[index];
  const next = complete ? undefined : stage.steps[index + 1];
  const done = stage.steps.slice(0, index + 1).map(s => s.artifact.name);
  const left = stage.steps.slice(index + 1).map(s => s.artifact.name);
  const percentage = Math.round(((index + 1) / stage.steps.length) * 100);
  const payload = layout === 'payload';
  const artifactStatus = stage.steps
    .map((s, i) => {
      const status = i <= index ? 'complete' : 'missing';
      return payload
        ? `<required_artifact name="${s.artifact.name}" status="${status}"/>`
        : `<artifact name="${s.artifact.name}" status="${status}"/>`;
    })
    .join('');
  const goal = complete ? 'achieved' : 'partial';
  const lists = `${block('produced', done)}${block('in_progress', [])}${block('remaining', left)}`;
  return [
    `<stage_reflection stage_is_complete="${complete}">`,
    '  <step_evaluation>',
    payload
      ? `    <step_summary><step_id>${step.id}</step_id><completion_status>completed</completion_status><reasoning>marker found & ${step.artifact.name} checked</reasoning></step_summary>`
      : `    <step_id>${step.id}</step_id><completion_status>completed</completion_status>`,
    `    <artifacts_produced><artifact name="${step.artifact.name}" status="complete"/></artifacts_produced>`,
    `    <key_findings><finding priority="high">${step.title} done</finding></key_findings>`,
    '  </step_evaluation>',
    '  <stage_assessment>',
    payload
      ? `    <stage_progress><completed_steps>${index + 1}</completed_steps><remaining_steps>${left.length}</remaining_steps><progress_percentage>${percentage}</progress_percentage></stage_progress>`
      : `    <progress><completed>${index + 1}</completed><remaining>${left.length}</remaining><percentage>${percentage}</percentage></progress>`,
    `    <stage_artifacts_status>${artifactStatus}</stage_artifacts_status>`,
    payload
      ? `    <stage_goal_achievement><status>${goal}</status></stage_goal_achievement>`
      : `    <goal_status>${goal}</goal_status>`,
    '  </stage_assessment>',
    `  <stage_goal_review><current_goal>${stage.goal}</current_goal><needs_update>false</needs_update><update_reasoning>on track</update_reasoning><proposed_goal/></stage_goal_review>`,
    '  <plan_new_steps needs_more_steps="false"/>',
    `  <experience_summary>${step.title}: reload the data if the kernel lost it.</experience_summary>`,
    payload
      ? `  <stage_experience_variable from="${step.id}">pandas read_csv is enough</stage_experience_variable>`
      : `  <stage_experience from="${step.id}">pandas read_csv is enough</stage_experience>`,
    `  <decision><next_state>${complete ? 'STAGE_COMPLETED' : 'STEP_RUNNING'}</next_state>${next ? `<next_focus>${next.goal}</next_focus>` : ''}<reasoning>${complete ? (left.length ? 'the stage goal is reached; the steps left are not needed' : 'every step of the stage is done') : `${left.length} step(s) left`}</reasoning></decision>`,
    ...(next
      ? [
          '  <context_for_next><if_continuing_stage>',
          `    <next_step_id>${next.id}</next_step_id>`,
          `    <next_step_focus>${next.goal}</next_step_focus>`,
          `    <variables_to_carry_forward><variable name="${step.artifact.name}" value="ready">${step.artifact.description}</variable></variables_to_carry_forward>`,
          '    <recommendations>reuse sales_df</recommendations>',
          '  </if_continuing_stage></context_for_next>'
        ]
      : []),
    payload
      ? `  <outputs_tracking_update><stage_level>${lists}</stage_level></outputs_tracking_update>`
      : `  <outputs_update>${lists}</outputs_update>`,
    '  <variable_management>keep every variable</variable_management>',
    payload
      ? '  <pcs_alignment_check>deterministic</pcs_alignment_check>'
      : '  <pcs_check>deterministic</pcs_check>',
    '</stage_reflection>'
  ].join('\n');
}
