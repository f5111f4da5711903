import { LabIcon } from '@jupyterlab/ui-components';
import bccSvg from '../../style/icons/bcc.svg';

export const bccIcon = new LabIcon({
  name: 'notebook-bcc:workflow',
  svgstr: bccSvg
});
