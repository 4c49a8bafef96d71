"""The course lab kit: student copies made from the solutions (release) and a grader (grade).

lab/lab.py is the command line; lab/README.md explains the kit to instructors.
"""
