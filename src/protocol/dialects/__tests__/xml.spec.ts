import {
  attr,
  child,
  childrenNamed,
  find,
  findAll,
  parseLenientXml,
  textOf
} from '../xml';

describe('lenient XML', () => {
  it('reads a well-formed document with entities, CDATA, comments and a declaration', () => {
    const doc = parseLenientXml(
      '<?xml version="1.0"?><!-- c --><a x="1" y=\'2\'><b>x &lt; y &amp; z &#65;&#x42;</b><c/><d><![CDATA[<i>raw</i>]]></d></a>'
    );
    expect(doc.partial).toBe(false);
    expect(doc.repairs).toEqual([]);
    expect(doc.root?.name).toBe('a');
    expect(doc.root?.attributes).toEqual({ x: '1', y: '2' });
    expect(textOf(child(doc.root, 'b'))).toBe('x < y & z AB');
    expect(child(doc.root, 'c')?.children).toEqual([]);
    expect(textOf(child(doc.root, 'd'))).toBe('<i>raw</i>');
  });

  it('gives valueless attributes the value "true"', () => {
    const doc = parseLenientXml(
      '<stage id="s" optional hidden title=plain><goal>g</goal></stage>'
    );
    expect(doc.root?.attributes).toEqual({
      id: 's',
      optional: 'true',
      hidden: 'true',
      title: 'plain'
    });
    expect(doc.repairs.join()).toContain('valueless attribute "optional"');
  });

  it('keeps stray <, & and > in text', () => {
    const doc = parseLenientXml(
      '<goal>RMSE < 25000 & MAPE <10% -> good; a <= b</goal>'
    );
    expect(textOf(doc.root)).toBe('RMSE < 25000 & MAPE <10% -> good; a <= b');
    expect(doc.partial).toBe(false);
  });

  it('reads HTML inside <variable> as text', () => {
    const doc = parseLenientXml(
      '<vars><variable name="t"><table><tr><td>1</td></tr></table></variable><variable name="p">plain</variable></vars>'
    );
    const vars = childrenNamed(doc.root, 'variable');
    expect(textOf(vars[0])).toBe('<table><tr><td>1</td></tr></table>');
    expect(textOf(vars[1])).toBe('plain');
    expect(doc.repairs).toContain('HTML inside <variable> read as text');
  });

  it('repairs mismatched closing tags', () => {
    const doc = parseLenientXml(
      '<steps><step id="a"><goal>g</gaol></step><step id="b"><goal>h</step><focus>f</focus></steps>'
    );
    const steps = childrenNamed(doc.root, 'step');
    expect(steps.map(s => attr(s, 'id'))).toEqual(['a', 'b']);
    expect(textOf(child(steps[0], 'goal'))).toBe('g');
    expect(textOf(child(steps[1], 'goal'))).toBe('h');
    expect(textOf(child(doc.root, 'focus'))).toBe('f');
    expect(doc.repairs.some(r => r.includes('mismatched </gaol>'))).toBe(true);
    expect(doc.repairs.some(r => r.includes('also closed <goal>'))).toBe(true);
  });

  it('ends a <variable> left open at the closing tag of an element around it', () => {
    const doc = parseLenientXml(
      '<steps><step id="s1"><required_variables><variable name="a">desc</required_variables></step>' +
        '<step id="s2"><required_variables><variable name="b">x</variable></required_variables></step></steps>'
    );
    const steps = childrenNamed(doc.root, 'step');
    expect(steps.map(s => attr(s, 'id'))).toEqual(['s1', 's2']);
    const [a] = findAll(steps[0], 'variable');
    expect(textOf(a)).toBe('desc');
    expect(textOf(find(steps[1], 'variable'))).toBe('x');
  });

  it('keeps a character reference it cannot decode as it is', () => {
    const doc = parseLenientXml('<a>x &#99999999; y &#xFFFFFFF; z &#65;</a>');
    expect(textOf(doc.root)).toBe('x &#99999999; y &#xFFFFFFF; z A');
  });

  it('closes a truncated document and marks it partial', () => {
    const doc = parseLenientXml(
      '<stages><stage id="a"><goal>first</goal></stage><stage id="b"><goal>sec'
    );
    expect(doc.partial).toBe(true);
    expect(findAll(doc.root, 'stage')).toHaveLength(2);
    expect(textOf(find(doc.root, 'goal'))).toBe('first');
    const cut = parseLenientXml('<stages><stage id="a" title="x');
    expect(cut.partial).toBe(true);
    expect(findAll(cut.root, 'stage')).toHaveLength(0);
  });

  it('takes the first known root among several, inside a Markdown fence', () => {
    const doc = parseLenientXml(
      '```xml\n<thinking>hm</thinking>\n<steps><step id="a"/></steps>\n<steps/>\n```',
      ['stages', 'steps']
    );
    expect(doc.roots.map(r => r.name)).toEqual(['thinking', 'steps', 'steps']);
    expect(doc.root?.name).toBe('steps');
    expect(findAll(doc.root, 'step')).toHaveLength(1);
    expect(parseLenientXml('<other/>', ['steps']).root).toBeNull();
    expect(parseLenientXml('no xml at all').root).toBeNull();
  });

  it('ignores stray closing tags and unterminated comments', () => {
    const doc = parseLenientXml('</x><a>t</a><!-- open');
    expect(textOf(doc.root)).toBe('t');
    expect(doc.partial).toBe(true);
  });
});

describe('lenient XML around LLM prose', () => {
  it('finds the known root after a sentence and before a closing remark', () => {
    const doc = parseLenientXml(
      'Here is the plan you asked for:\n\n<stages><stage id="s" title="S"/></stages>\n\nLet me know if you need changes.',
      ['stages']
    );
    expect(doc.root?.name).toBe('stages');
    expect(child(doc.root, 'stage')?.attributes.id).toBe('s');
  });

  it('finds the known root in a fence after prose', () => {
    const doc = parseLenientXml(
      'Plan:\n```xml\n<behavior id="b1"><task>t</task></behavior>\n```\nDone.',
      ['behavior']
    );
    expect(doc.root?.name).toBe('behavior');
    expect(textOf(child(doc.root, 'task'))).toBe('t');
  });
});

describe('a known element inside a wrapper', () => {
  it.each([
    [
      '<response><stages><stage id="a" title="A"/></stages></response>',
      'stages'
    ],
    [
      '<answer><result><reflection current_step_is_complete="true"/></result></answer>',
      'reflection'
    ],
    ['<Response><STAGES/></Response>', 'STAGES']
  ])('%s → <%s>', (xml, name) => {
    const doc = parseLenientXml(xml, ['stages', 'reflection']);
    expect(doc.root?.name).toBe(name);
    expect(doc.repairs).toContain(`<${name}> found inside a wrapper element`);
  });

  it('keeps a known root before looking inside, and finds nothing when nothing is known', () => {
    expect(
      parseLenientXml('<stages><reflection/></stages>', [
        'stages',
        'reflection'
      ]).root?.name
    ).toBe('stages');
    expect(
      parseLenientXml('<response><other/></response>', ['stages']).root
    ).toBeNull();
  });
});
