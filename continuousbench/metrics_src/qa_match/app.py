from pathlib import Path

import evaluate
from evaluate.utils import launch_gradio_widget

# Load the script beside this file, so a Space serves its own copy whatever its repo id.
launch_gradio_widget(evaluate.load(str(Path(__file__).with_name("qa_match.py"))))
